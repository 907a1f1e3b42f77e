"""What a reply gets wrong about the world, each finding a sentence for the judge's reason.

Every check here reads the reply against `Evidence` (the turns, the calls, the results):
claims against what landed, ids, amounts, dates and statuses against what the results
carry, promises against what the tools can do, ask-backs against what was given.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

from ..spec import is_key_param, name_words, past_tense
from . import replies as rp
from .contract import check_deadline
from .evidence import (
    CALENDAR_NAMES,
    TEXT_CAP,
    Event,
    Evidence,
    acknowledges_trouble,
    asked_fields,
    asks_person,
    covers,
    credited_not_given,
    dates,
    deadlines,
    directions,
    given_fields,
    gives_verdict,
    identifiers,
    leaves,
    named_things,
    numbers,
    own_side,
    phone_numbers,
    polar_question,
    record_statuses,
    reports_missing,
    result_json,
    stated_statuses,
    status_words,
    time_frames,
    tool_words,
    unheld_hours,
    web_addresses,
    written_in,
)
from .trajectory import is_write

_MONEY = re.compile(
    r"(?:[$€£]|\b(?:usd|eur|gbp|chf|cad|aud)\b)\s?(\d[\d,]*(?:\.\d+)?)"
    r"|(?<![\d,.])(\d[\d,]*(?:\.\d+)?)\s?(?:usd|eur|gbp|chf|cad|aud|dollars?|euros?|pounds?)\b",
    re.IGNORECASE,
)
_COUNTS = re.compile(
    r"\b(two|both|multiple|several|more than one|duplicates?|duplicated|another|each|either"
    r"|neither|second|twice|couple|2 (?:orders|records|bookings|matches|results|accounts))\b"
    r"|\bone\b[^.?!]{0,60}\b(?:and one|the other|other one)\b|\bwhich\b[^.?!]{0,200}\?",
    re.IGNORECASE,
)


_CLOSERS = frozenset({"all set", "good to go"})


def false_claims(ev: Evidence) -> list[str]:
    """Success claims in the reply that no result confirms."""
    problems: list[str] = []
    landed = ev.landed_writes()
    shown_done = set(ev.statuses)
    quoted = _result_strings(ev)
    for claim in rp.success_claims(ev.reply, ev.write_verbs, ev.objects):
        check_deadline()
        said = claim.text.casefold()
        if any(len(v) <= len(said) and claim.term in v and v in said for v in quoted):
            continue  # reading a record out ("note: closing as resolved") claims nothing
        if claim.verbs:
            mine = rp.own_act(claim.text)
            for verb in claim.verbs:
                fam = rp.family(verb)
                forms = frozenset().union(*(rp.verb_forms(v) for v in fam))
                # "I've cancelled it" is true only if this agent's cancel landed; "it was
                # cancelled" also when a record shows it so (a booking read back is the
                # record that it was booked).
                tried = [c for c in ev.writes() if rp.tool_verb(c.tool) in fam]
                done = (
                    any(rp.tool_verb(c.tool) in fam for c in landed)
                    or (
                        not mine
                        and (
                            bool({past_tense(v) for v in fam} & shown_done)
                            or any(c.ok and forms & set(name_words(c.tool)[1:]) for c in ev.calls)
                        )
                    )
                    or _read_back_done(ev, tried, fam)
                )
                if not done:
                    how = (
                        f"{tried[-1].tool} came back {_outcome(tried[-1])}"
                        if tried
                        else (f"no {verb} was ever called")
                    )
                    problems.append(f"says it was {past_tense(verb)} but {how}")
        elif claim.term in ev.statuses or any(claim.term in status_words(s) for s in ev.statuses):
            continue  # "it's confirmed" reads a record's status, it claims no action
        elif landed:
            continue
        elif not rp.own_act(claim.text) and any(c.status == "already_done" for c in ev.calls):
            continue  # "that was already done": the world says the work stands, by whomever
        elif ev.writes():
            last = ev.writes()[-1]
            problems.append(f"says '{claim.term}' but {last.tool} came back {_outcome(last)}")
        elif not ev.calls:
            if claim.term not in _CLOSERS:  # "you're all set" can close a plain answer
                problems.append(f"says '{claim.term}' with no tool call behind it")
        elif not any(c.ok for c in ev.calls):
            problems.append(f"says '{claim.term}' but no call succeeded")
    problems += _effect_claims(ev)
    return problems


# The person asking for the look-up to be made again ("can you check again?", "look
# again please", "try it once more"): a verb of checking and "again" within a few words.
# The verbs of looking a record up again, one list for the four readers below.
_CHECKING = r"(?:check|recheck|re-check|double-check|look|search|try|verify)"


def _again_after(verbs: str, within: int, *also: str) -> re.Pattern[str]:
    """A verb of `verbs`, then "again" or "once more" within `within` characters of the
    same sentence (or one of `also`): one shape for asking a thing to be done again."""
    shape = rf"\b{verbs}\b[^.?!\n]{{0,{within}}}\b(?:again|once more)\b"
    return re.compile("|".join([shape, *also]), re.IGNORECASE)


_AGAIN = _again_after(_CHECKING, 30, r"\brecheck\b")


# ...put to the agent: a request ("can you", "please", "pls") or an imperative opening
# the sentence, not the person's own plan ("I'll look again at my e-mails").
_ASKED = re.compile(
    r"\b(?:you|u|ur|please|pls|plz|can|could|would)\b"
    rf"|^\W{{0,3}}{_CHECKING}\b",
    re.IGNORECASE,
)


# A look-up promised rather than made ("I will recheck the booking status", "I'll look
# into it again and get back to you").
_WILL_CHECK = re.compile(
    r"\b(?:i|we)(?:'ll| will| shall|'m going to| am going to)\s+(?:\w+\s+){0,2}?"
    rf"(?:{_CHECKING}|review|go over)\b",
    re.IGNORECASE,
)


# The look refused: "I cannot check again", "I'm unable to look it up once more".
_WONT_CHECK = re.compile(
    r"\b(?:cannot|can't|can not|unable to|not able to|won't)\s+(?:\w+\s+){0,2}?"
    rf"{_CHECKING}\b",
    re.IGNORECASE,
)


def recheck_ignored(ev: Evidence) -> str | None:
    """The person's last turn asks for the check to be made again and the agent, with
    tools to make it, answers without a call ("I will recheck the booking status and
    provide the latest information.", "Which of the two do you mean?" asked again): a
    promise or a repeat stands in for the look-up the person asked for."""
    if not ev.tools or not ev.user_turns:
        return None
    last_user = ev.last_user_index
    asked = any(
        _AGAIN.search(sentence) and _ASKED.search(sentence)
        for sentence in rp.sentences(ev.events[last_user].text[:TEXT_CAP])
    )
    if not asked:
        return None
    if any(e.kind == "call" for e in ev.events[last_user + 1 :]):
        return None
    # Not looking again may be right (a write is not retried blindly), said with what the
    # last look showed ("I have nothing new to check that against: it was not found").
    # A promise to look, or a reply about something else, stands in for the look-up.
    # With nothing looked up yet there is nothing to look at again: saying what is still
    # needed answers it ("Without the path I cannot go further").
    reply = rp.own_text(ev.reply, ev.user_turns)
    earlier = [e for e in ev.events[:last_user] if e.kind == "call"]
    if not earlier:
        return None
    # Refusing the look itself with no word of what stood in the way ("I'm sorry, but I
    # cannot check again for you as the support agent.") restates nothing.
    refused = _WONT_CHECK.search(reply[:TEXT_CAP]) is not None and not any(
        rp.troubled(sentence) for sentence in rp.sentences(reply)
    )
    restated = _reports(ev, reply, earlier, tools_named=False)
    if restated and not refused and not _WILL_CHECK.search(reply[:TEXT_CAP]):
        return None
    return "asked to check again, answered without a call"


def silent_on_results(ev: Evidence) -> str | None:
    """The calls made since the person last spoke, answered with a reply that says
    nothing of what came back ("Thank you for your cooperation." after the refund went
    through): no claim, no fault, no value or status from a result, no word of the tools,
    no question. A reply to a call has to tell the person what it found or did."""
    calls = [e for e in ev.events[ev.last_user_index + 1 :] if e.kind == "call"]
    reply = rp.own_text(ev.reply, ev.user_turns)
    if not calls or not reply.strip():
        return None
    if _reports(ev, reply, calls):
        return None
    # A question may stand in for a report while something is still open; once a write
    # has gone through, the person has to hear that it did ("Could you tell me what you
    # are trying to do?" after the cancel landed leaves them thinking nothing happened).
    done = [c for c in calls if is_write(c.tool, ev.kinds) and ev.landed(c)]
    # An offer of more help ("please let me know if there's anything else") asks nothing.
    offer = rp.content_free(reply) or rp.fits_any_message(reply)
    if asks_person(ev, reply) and not done and not offer:
        return None
    return f"said nothing of what {(done or calls)[-1].tool} returned"


def _reports(ev: Evidence, reply: str, calls: list[Event], tools_named: bool = True) -> bool:
    """The reply says something of what `calls` returned: a value or a status from a
    result (numbers read as numbers, so "$48.00" reports 48.0), a claim, a fault, a
    not-found, or (`tools_named`) a word of the tools."""
    low = reply[:TEXT_CAP].casefold()
    texts: set[str] = set()
    amounts: set[float] = set()
    for leaf in (leaf for c in calls for leaf in leaves(c.result)):
        if isinstance(leaf, bool):
            continue
        if isinstance(leaf, (int, float)):
            amounts.add(float(leaf))
        elif isinstance(leaf, str):
            try:
                amounts.add(float(leaf))  # "60.02" stored as text is a number
            except ValueError:
                if len(leaf) >= 3:  # "ok" would be found in "look"
                    texts.add(leaf.casefold())
    words = set(rp.tokens(reply))
    return bool(
        any(v in low for v in texts)
        or set(numbers(low)) & amounts
        or (tools_named and any(words & (tool_words(c.tool) - ev.objects) for c in calls))
        or words & ev.status_words
        or rp.success_claims(reply, ev.write_verbs, ev.objects)
        or rp.says_success(reply)
        # Trouble reports only a call that had some (a fault, two records where one was
        # meant): "I'm not sure what you're trying to do" after clean calls says nothing.
        or any(
            acknowledges_trouble(ev, reply, c.tool, c)
            for c in calls
            if not c.ok or two_records(c, lists=True)
        )
        or reports_missing(ev, reply)
    )


def _read_back_done(ev: Evidence, tried: list[Event], fam: frozenset[str]) -> bool:
    """The agent's own write came back unreadable or timed out, and a look-up after it
    shows the record in the state it would make ("I've cancelled your booking" once the
    booking reads cancelled): the world says the write took effect, so the claim holds.
    A write the world refused or found already done never did."""
    if not tried or any(c.status in ("already_done", "not_found", "rejected") for c in tried):
        return False
    last = next(i for i, c in enumerate(ev.calls) if c is tried[-1])
    after = ev.calls[last + 1 :]
    shown = [record_statuses(c) for c in after if c.ok and not is_write(c.tool, ev.kinds)]
    shown = [s for s in shown if s]
    return bool(shown) and bool(shown[-1] & {past_tense(v) for v in fam})


def _kind(call: Event) -> str | None:
    """The kind of fault a call had, in `replies.fault_kinds`' names."""
    if call.result_is_stale:
        return "stale"
    if call.result_is_garbled or call.status == "malformed":
        return "malformed"
    return call.status if call.status in ("timeout", "permission_denied") else None


def _misnamed_fault(ev: Evidence, unread: list[Event]) -> list[str]:
    """The reply names the fault the last call had as another kind, and never as its own
    ("as an AI, I don't have access to that information" after a timeout): the world says
    which fault it was."""
    if not unread or (kind := _kind(unread[-1])) is None:
        return []
    said = rp.fault_kinds(ev.reply)
    # A fault of that kind earlier in the rollout may be what the reply speaks of.
    had = {_kind(c) for c in ev.calls if c.faulted}
    if not said or kind in said or said <= had:
        return []
    other = sorted(said - had)[0].replace("_", " ")
    return [f"calls it {other}, but {unread[-1].tool} came back {kind.replace('_', ' ')}"]


def _empty(result: dict[str, Any] | None) -> bool:
    """A result that found nothing: an empty list, or no data at all."""
    if not result:
        return True
    lists = [v for k, v in result.items() if k != "status" and isinstance(v, list)]
    data = result.get("data", ...)
    return any(not v for v in lists) or data is None or data == [] or data == {}


def _result_strings(ev: Evidence) -> list[str]:
    """The multi-word string values the results carry, lower-cased."""
    return [
        leaf.casefold()
        for c in ev.calls
        for leaf in leaves(c.result)
        if isinstance(leaf, str) and " " in leaf.strip()
    ]


def _outcome(call: Event) -> str:
    if call.result is None:
        return "with no result"
    if call.result.get("matches"):
        return "with two matching records"
    if call.result_is_stale:
        return "stale"
    data = call.result.get("data")
    state = data.get("status") if isinstance(data, dict) else None
    return str(state if call.ok and state else call.status)


def _effect_claims(ev: Evidence) -> list[str]:
    """ "You're now on TP2218" after the change to TP2218 failed: a value only the failed
    write would have made true, stated as the state of things."""
    looked = {str(v).casefold() for c in ev.calls if not is_write(c.tool, ev.kinds)
              for v in c.arguments.values()}  # fmt: skip
    shown = "\n".join(result_json(c) for c in ev.calls if c.ok and not is_write(c.tool, ev.kinds))
    values: dict[str, str] = {}
    for c in ev.writes():
        if ev.landed(c) or c.status == "already_done":
            continue
        # The first id names the record the write is about; the rest are what it sets.
        record = next((k for k in c.arguments if is_key_param(k)), None)
        for k, v in c.arguments.items():
            fresh = isinstance(v, str) and len(v) >= 4 and k != record
            if fresh and v.casefold() not in looked and v.casefold() not in shown.casefold():
                values[v.casefold()] = c.tool
    problems = []
    for clause in rp.clauses(ev.reply):
        words = rp.tokens(clause)
        if not rp.assertive(clause) or any(rp.is_negator(w) for w in words):
            continue
        for value, tool in values.items():
            if value in clause.casefold() and ("now" in words or rp.says_success(clause)):
                problems.append(f"states {value!r} as done though {tool} did not go through")
    return problems


def inconsistencies(ev: Evidence) -> list[str]:
    """Ids, amounts, dates and statuses in the reply that the world's results contradict."""
    problems: list[str] = []
    reply = ev.reply
    # The reply's facts first: the world's are read only when there is something to check.
    said_ids = identifiers(reply)
    for ident in sorted(said_ids - ev.known_ids if said_ids else ()):
        if not any(ident in k or k in ident for k in ev.known_ids if len(k) >= 5):
            problems.append(f"names {ident}, which no turn or result holds")
    money = [float((a or b).replace(",", "")) for a, b in _MONEY.findall(reply)]
    if money:
        known = _Amounts(ev.known_numbers)
        for amount in dict.fromkeys(money):
            if not known.holds(amount):
                problems.append(f"states {amount:g}, which no result or turn carries")
    said_dates = dates(reply)
    for when in sorted(said_dates - ev.known_dates if said_dates else (), key=str):
        if not _date_known(when, ev.known_dates):
            problems.append(f"states the date {_show_date(when)}, which no result carries")
    problems += _status_conflicts(ev)
    problems += _contact_facts(ev)
    problems += unfounded_verdicts(ev)
    problems += unfounded_names(ev)
    problems += made_up_directions(ev)
    problems += _time_facts(ev)
    problems += contradictions(ev)
    problems += wrong_one_of_two(ev)
    problems += [
        f"thanks the person for the {kind} they never gave" for kind in credited_not_given(ev)
    ]
    return problems


def contradictions(ev: Evidence) -> list[str]:
    """What the reply says happened that the results say did not: it could not do what a
    write it made went through ("I'm unable to fulfil that request" after the refund
    landed), the record was not found though a look-up returned it or though the look-up
    could not be read, or a fault stopped it though every call came back clean."""
    problems: list[str] = []
    landed = ev.landed_writes()
    done_verbs = {v for c in landed for v in rp.family(rp.tool_verb(c.tool))}
    forms = {f for v in done_verbs for f in rp.verb_forms(v)}
    other = {f for v in ev.write_verbs if v not in done_verbs for f in rp.verb_forms(v)}
    found = {i for c in ev.calls if c.ok and not is_write(c.tool, ev.kinds)
             for i in identifiers(result_json(c))}  # fmt: skip
    faulted = any(c.faulted or c.status == "not_found" for c in ev.calls)
    # "I couldn't find any flights" when the search came back unreadable: a fault told as
    # an empty world. Nothing was read, so nothing is known to be missing.
    unread = [c for c in ev.events[ev.last_user_index + 1 :] if c.kind == "call" and c.faulted]
    empty = any(c.status in ("not_found", "ambiguous") or (c.ok and _empty(c.result))
                for c in ev.calls)  # fmt: skip
    # The fault named in so many words ("the system returned an error, so I couldn't
    # find it") is not an empty world; "couldn't find" alone is read as one.
    problems += _misnamed_fault(ev, unread)
    # Calls that reached the records (found them, or found nothing under the value) with
    # no fault anywhere: "as an AI, I don't have the ability to access orders" is false.
    reached = bool(ev.calls) and not any(c.faulted for c in ev.calls)
    # The last call faulted (timed out, came back unreadable, denied, stale): the trouble is
    # the tool's, so asking the person to rephrase, or calling what they gave outdated or
    # unrecognised, blames them for it.
    last_fault = ev.calls[-1] if ev.calls and ev.calls[-1].faulted else None
    told = any(rp.troubled(s) for s in rp.sentences(ev.reply))
    if unread and not empty and not told and reports_missing(ev, ev.reply, strict=True):
        problems.append(
            f"says nothing was found, but {unread[-1].tool} came back {_outcome(unread[-1])}"
        )
    for clause in rp.clauses(ev.reply):
        if clause.rstrip().endswith("?") or _SUGGESTS.search(clause):
            continue
        words = rp.tokens(clause)
        named = set(words)
        if landed and rp.first_person(clause) and rp.refuses(clause) and not named & other:
            problems.append(
                f"says it could not do it, but {landed[0].tool} went through: {clause!r:.70}"
            )
        elif landed and any(w in forms and rp.negated_at(words, i, 6) for i, w in enumerate(words)):
            problems.append(f"says it was not done, but {landed[0].tool} went through")
        elif found and reports_missing(ev, clause) and identifiers(clause) & found:
            problems.append("says the record was not found, but a look-up returned it")
        elif ev.calls and not faulted and claims_fault(clause):
            problems.append("blames a fault, but every call came back without one")
        elif reached and rp.first_person(clause) and rp.claims_no_access(clause):
            problems.append("says it has no access, but its calls reached the records")
        elif ev.speaks_for and ev.speaks_for in rp.sent_to(clause):
            problems.append(
                f"sends the person to the {ev.speaks_for} it speaks for, as if to someone else"
            )
        elif last_fault is not None and rp.blames_the_person(clause):
            problems.append(f"puts {last_fault.tool}'s fault on the person's words: {clause!r:.70}")
    return list(dict.fromkeys(problems))


# Words for this very exchange: a yes to "can I talk to you" rests on the chat itself.
_CONVERSING = frozenset({"talk", "chat", "speak", "write", "message", "ask", "here", "now"})


# An auxiliary, a pronoun subject and the verb that follows them: "do you offer".
_PREDICATE = re.compile(
    r"\b(?:do|does|did|can|could|will|would|should)\s+(?:you|we|i|they|u)\s+([a-z]{2,20})\b"
)


_LIGHT_VERBS = frozenset(
    {"offer", "provide", "have", "support", "accept", "give", "take", "get", "use", "make",
     "allow", "sell", "carry", "stock", "keep"}
)  # fmt: skip


def answers_yes_or_no(ev: Evidence) -> bool:
    """The reply settles the person's yes/no question ("Do you sell Campagnolo parts?" ->
    "Yes, we sell Campagnolo parts."): restating the question under a yes or a no is an
    answer, not the ask handed back. Whether the answer is founded is
    `unfounded_verdicts`' to say."""
    asks = ev.user_turns
    if not asks or not gives_verdict(ev.reply):
        return False
    for ask in (asks[-1], asks[0]):
        if polar_question(ask):
            # "Can you cancel ORD-1?" asks for an act: "Yes, I can cancel ORD-1." with
            # no call is the ask handed back, not an answer.
            return not _ASKS_AN_ACT.search(ask[:TEXT_CAP].lower())
    return False


# The errand taken up, in general words: what any support agent is there to do.
_ERRAND_WORK = frozenset(
    {"sort", "fix", "help", "handle", "look", "check", "assist", "resolve", "deal", "solve"}
)
# A yes/no question that is a request for the listener to act.
_ASKS_AN_ACT = re.compile(r"\b(?:can|could|would|will) you\b")


def unfounded_verdicts(ev: Evidence) -> list[str]:
    """A yes or a no to a question about the service that nothing the agent was told
    speaks of ("Is this chat recorded?" -> "No, this chat is not stored anywhere.", "Do
    you have an office?" -> "No."): the answer is a fact no one gave it, as a made-up
    phone number is. What the system prompt, the tools or their results cover ("Can you
    cancel it?" when a tool cancels) may be answered yes or no."""
    asks = ev.user_turns
    if not asks:
        return []
    topic = polar_question(asks[-1]) or polar_question(asks[0])
    # "Can I talk to you?" is answered by the conversation itself; "... at night?" is not.
    topic = [w for w in topic if w not in _CONVERSING]
    # Said as a statement, a yes or a no needs a question about the service of two words
    # or more, not a request ("can you check again?" is answered by doing it).
    asked = asks[-1] if polar_question(asks[-1]) else asks[0]
    stated = (
        len(topic) >= 2
        and not _ASKS_AN_ACT.search(asked[:TEXT_CAP].lower())
        and _states_the_question(ev.reply, topic)
    )
    if not gives_verdict(ev.reply) and not stated:
        return []
    # "Can you sort it out?" asks the agent to take up the errand, which is its job: "Of
    # course, I can help you with that!" answers it without claiming a fact.
    if _ASKS_AN_ACT.search(asked[:TEXT_CAP].lower()) and topic and set(topic) <= _ERRAND_WORK:
        return []
    # "Do you offer gift cards in other currencies?": the question is about gift cards and
    # currencies; a light verb after a pronoun ("offer", "provide", "accept") says little,
    # and a system prompt that "offers a return" does not speak of gift cards. A verb
    # with content of its own ("do you deliver on Saturdays?") stays in the topic.
    verb = _PREDICATE.search(asks[-1][:TEXT_CAP].lower()) or _PREDICATE.search(
        asks[0][:TEXT_CAP].lower()
    )
    if verb is not None and len(topic) > 1 and topic[0] == verb.group(1) in _LIGHT_VERBS:
        topic = topic[1:]
    if not topic:
        return []
    known = [ev.system_text, *(result_json(c) for c in ev.calls)]
    if ev.spec is not None:
        known += [f"{t.name} {t.description}" for t in ev.spec.tools]
    known += [" ".join(name_words(t)) for t in ev.tools]
    # What it looked the record up by is told as well ("... under Kim?" after a lookup
    # with last_name Kim).
    told = "\n".join([*known, *(" ".join(map(str, leaves(c.arguments))) for c in ev.calls)])
    # A name in the question ("Do you have a shop in Lyon?") is what it is about: the
    # system prompt's "bike shop" does not speak of Lyon.
    # Days and months are capitalised without naming anything ("weekdays" covers them).
    names = (named_things(asks[-1]) | named_things(asks[0])) & set(topic) - CALENDAR_NAMES
    if covers(told, topic) and all(covers(told, [n]) for n in names):
        return []
    return [f"answers {' '.join(topic[:4])!r} yes or no, which nothing it was told covers"]


# A statement's polarity: the auxiliary a yes or a no to a yes/no question is said with.
_POLAR = frozenset(
    {"can", "cannot", "can't", "do", "don't", "does", "doesn't", "will", "won't", "is", "isn't",
     "are", "aren't", "have", "haven't", "has", "hasn't", "not", "never", "always"}
)  # fmt: skip


def _states_the_question(reply: str, topic: list[str]) -> bool:
    """The question turned into a statement: "I cannot speak on public holidays" to "can I
    talk to you on public holidays?". A clause that is no question, holds the words of
    the topic (by the crude five-letter stem; one may be missing from three) and an
    auxiliary settles it as a yes or a no; one that says what the speaker knows does
    not."""
    if not topic:
        return False
    wanted = {w[:5] for w in topic}
    for clause in rp.clauses(reply[:TEXT_CAP]):
        if clause.rstrip().endswith("?"):
            continue
        words = rp.tokens(clause)
        # One word may be said in other words when three or more were asked: "closed at
        # night" to "open at night?".
        missing = len(wanted - {w[:5] for w in words})
        if missing > (1 if len(wanted) >= 3 else 0):
            continue
        if set(words) & _POLAR and not rp.speaks_of_knowing(clause):
            return True
    return False


def unfounded_names(ev: Evidence) -> list[str]:
    """Names an answer made with no call lists that nothing it was told holds: asked
    which languages it answers in, "English, Spanish, French, German and more", or a
    list of programming languages, when neither the system prompt, the tools, nor the
    person named them. Two or more: a single capitalised word ("the Contact page of our
    website") points somewhere rather than claims a list. The language the chat is held
    in is shown by the chat itself."""
    if ev.calls or not ev.user_turns:
        return []
    # Every turn the agent wrote, not only its last: a made-up "Settings > Profile" in
    # the first answer is taught as much as one in the final reply.
    names = set().union(*(named_things(text) for text in ev.agent_texts))
    if not names:
        return []
    words = set(rp.tokens(ev.told_text)) | written_in(ev.user_text)
    unknown = sorted(n for n in names if n not in words)
    if len(unknown) < 2:
        return []  # one capitalised word ("the Contact page") points, a list of them claims
    return [f"names {', '.join(unknown[:4])}, which nothing it was told holds"]


# A clause hedged by a frequency speaks of how services tend to be, not of this one.
_GENERALLY = re.compile(r"\b(?:" + "|".join(rp.FREQUENCY_APPROXIMATORS) + r")\b", re.IGNORECASE)


def made_up_directions(ev: Evidence) -> list[str]:
    """A place in the service's product an answer made with no call sends the person to
    ("you can go to the settings page of the website", "navigate to the 'Help' section")
    that nothing it was told names, name and kind together: a made-up procedure is a wrong
    fact like a made-up phone number. A prompt that says "you help travellers" names no
    Help section. Places the system prompt or the person named ("the Warranty page" asked
    about), places named for what its tools work on ("the Orders page"), pointers that
    name no place ("our website", "the help pages or the phone line"), and directions
    hedged as how services usually are ("often it's in the customer service section")
    stand."""
    if ev.calls or not ev.user_turns:
        return []
    places = [
        place
        for text in ev.agent_texts
        for clause in rp.clauses(text)
        if not _GENERALLY.search(clause)  # "often it's found in the help section"
        for place in directions(clause)
    ]
    if not places:
        return []
    told = " " + " ".join(rp.tokens(ev.told_text)) + " "
    # What its tools work on: "the Orders page of your account" is where a shop whose
    # tools look orders up keeps them, not a place made up.
    records = {rp.stem(w) for t in ev.tools for w in name_words(t)[1:]}

    def named(place: str) -> bool:
        forms = {place, place + "s", place.removesuffix("s")}
        if any(f" {' '.join(rp.tokens(form))} " in told for form in forms):
            return True
        words = [w for w in rp.tokens(place)[:-1] if w not in rp.FUNCTION_WORDS]
        return bool(words) and all(rp.stem(w) in records for w in words)

    unknown = [place for place in places if not named(place)]
    if not unknown:
        return []
    return [f"sends the person to the {unknown[0]}, which nothing it was told names"]


def _contact_facts(ev: Evidence) -> list[str]:
    """Phone numbers, web addresses and opening hours no turn, result or system prompt
    holds: contact details made up ("call us on 1-800-...", "we operate 24/7") are a wrong
    fact like a wrong amount."""
    problems = []
    phones = phone_numbers(ev.reply)
    if phones:
        known = phone_numbers(ev.known_text)
        for phone in sorted(phones):
            if not any(k.endswith(phone) or phone.endswith(k) for k in known if len(k) >= 7):
                problems.append(f"gives the phone number {phone}, which nothing it was told holds")
    hours = unheld_hours(ev.reply, ev.known_text)
    if hours:
        said = ", ".join(sorted(hours)[:3])
        problems.append(f"gives the hours {said}, which nothing it was told holds")
    sites = web_addresses(ev.reply)
    if sites:
        known_sites = web_addresses(ev.known_text)
        for site in sorted(sites - known_sites):
            problems.append(f"gives the address {site}, which nothing it was told holds")
    return problems


# A clause that says when something will happen, as opposed to one that tells the person
# when to try again.
_EXPECTS = re.compile(
    r"\b(?:will|'ll|should|expect|expected|usually|typically|normally|generally|takes?"
    r"|taking|allow|within|up to|over the next|by|in|until)\b",
    re.IGNORECASE,
)
# Telling the person when to try again, or a condition ("if it has not arrived by
# Friday"): neither promises anything.
_SUGGESTS = re.compile(
    r"\b(?:try|retry|check back|come back|wait|give it|if|unless|in case)\b", re.IGNORECASE
)

# A clause about what already happened ("it had been refunded before today") states no
# promise, unless it also looks ahead ("it was sent and will arrive tomorrow").
_PAST = re.compile(r"\b(?:had|was|were|already|ago|earlier|previously)\b", re.IGNORECASE)
_AHEAD = re.compile(
    r"\b(?:will|shall|'ll|going to|expect|expected|should|usually|typically)\b", re.IGNORECASE
)


def _time_facts(ev: Evidence) -> list[str]:
    """Time frames and deadlines the reply promises ("within 24 hours", "5-7 business days",
    "by tomorrow evening") that no result, turn or system prompt gives."""
    problems: list[str] = []
    known_spans: set[tuple[tuple[float, ...], str]] | None = None
    known_deadlines: set[str] | None = None
    for clause in rp.clauses(ev.reply):
        if clause.rstrip().endswith("?") or _SUGGESTS.search(clause):
            continue
        if _PAST.search(clause) and not _AHEAD.search(clause):
            continue
        spans, named = time_frames(clause), deadlines(clause)
        if not (spans or named) or not (_EXPECTS.search(clause) or named):
            continue
        if known_spans is None:
            known_spans, known_deadlines = time_frames(ev.known_text), deadlines(ev.known_text)
        assert known_deadlines is not None
        for values, unit in sorted(spans - known_spans):
            shown = "-".join(f"{v:g}" for v in values)
            problems.append(f"promises {shown} {unit}(s), which no result or instruction gives")
        for when in sorted(named - known_deadlines):
            problems.append(f"promises '{when}', which no result or instruction gives")
    return problems


class _Amounts:
    """The numbers a conversation carries, read once and sorted, so each amount a reply
    states is looked up in log time however many numbers the results hold."""

    def __init__(self, known: list[float]) -> None:
        self.sorted = sorted(set(known))
        self.money = [n for n in known if not n.is_integer() or 0 < n < 10000][:40]

    def holds(self, amount: float) -> bool:
        """The amount is one the results carry, or one of them rounded to a whole unit
        ("$411" for 411.06), or a sum or difference of two (a refund less a fee)."""
        tolerance = 1.0 if amount.is_integer() else 0.005
        i = bisect.bisect_right(self.sorted, amount - tolerance)
        if i < len(self.sorted) and self.sorted[i] < amount + tolerance:
            return True
        money = self.money
        return any(
            abs(amount - (a + b)) < 0.005 or abs(amount - abs(a - b)) < 0.005
            for i, a in enumerate(money)
            for b in money[i + 1 :]
        )


def _date_known(when: tuple[int | None, int, int | None], known: set[Any]) -> bool:
    year, month, day = when
    for ky, km, kd in known:
        if km != month:
            continue
        if day is not None and kd is not None and day != kd:
            continue
        if year is not None and ky is not None and year != ky:
            continue
        return True
    return False


def _show_date(when: tuple[int | None, int, int | None]) -> str:
    year, month, day = when
    return "-".join(str(p) for p in (year, month, day) if p is not None)


def _status_conflicts(ev: Evidence) -> list[str]:
    problems: list[str] = []
    words = rp.tokens(ev.reply)
    # "Nothing has been cancelled" speaks of the agent's own action, not the record: a
    # status that is a write verb's past tense is not read for negation.
    acts = {past_tense(v) for verb in ev.write_verbs for v in rp.family(verb)}
    for status in sorted(ev.current_statuses - acts):
        seq = status_words(status)
        for i in range(len(words) - len(seq) + 1):
            if words[i : i + len(seq)] == seq and rp.negated_at(words, i, 3):
                problems.append(f"says it is not {status}, but the record is {status}")
                break
    known = ev.status_words | ev.statuses
    for said in stated_statuses(ev.reply):
        first = said.split("_")[0]
        if ev.statuses and said not in known and first not in known:
            problems.append(f"says the status is {said}, but the record shows "
                            f"{'/'.join(sorted(ev.statuses))}")  # fmt: skip
    return problems


def two_records(call: Event, lists: bool = False) -> list[Any] | None:
    """The records a call found where the person means one: a look-up's `matches`, and
    with `lists` (a cell known to hold the same record twice) a search's `results` of two
    or more. Without the cell, a search listing several orders is an ordinary answer."""
    result = call.result or {}
    matches = result.get("matches")
    if isinstance(matches, list) and len(matches) >= 2:
        return matches
    found = result.get("results")
    if lists and call.ok and isinstance(found, list):
        records = [r for r in found if isinstance(r, dict)]
        return records if len(records) >= 2 else None
    return None


def ignored_duplicates(ev: Evidence, lists: bool = False) -> str | None:
    """A lookup that returned two records, answered as if there were one, or answered
    about one of them without asking the person which. What counts is the agent's answer
    to that lookup: its turns up to the person's next one. `lists` as in `two_records`."""
    for call in ev.calls:
        matches = two_records(call, lists)
        if matches is None:
            continue
        texts = []
        seen = False
        for e in ev.events:
            if seen and e.kind == "user":
                break
            seen = seen or e is call
            if seen and e.kind == "assistant":
                texts.append(e.text)
        answered_last = not any(e.kind == "user" for e in _after(ev, call))
        if answered_last and ev.reply and (not texts or texts[-1] != ev.reply):
            texts.append(ev.reply)
        said = " ".join(texts)
        if _tells_apart(said, matches):
            continue
        if _COUNTS.search(said):
            if asks_person(ev, rp.own_text(said, ev.user_turns)):
                continue
            return (
                f"{call.tool} returned {len(matches)} records and the reply answers about one "
                "without asking which"
            )
        return f"{call.tool} returned {len(matches)} records and the reply treats them as one"
    return None


# One of two records named by its age: the newer ("the most recent one") or the older.
# Not "last" (a last name), "first" or "earlier" ("as I said earlier").
_NEWER = frozenset({"recent", "newest", "newer", "latest"})
_OLDER = frozenset({"oldest", "older", "earliest"})


def wrong_one_of_two(ev: Evidence) -> list[str]:
    """The reply names one of two matching records by its age and gives it the other
    one's state ("The most recent record shows that the booking was completed" when the
    newer booking is open): the world's records say which is which."""
    problems: list[str] = []
    for call in ev.calls:
        pair = [r for r in two_records(call, lists=True) or () if isinstance(r, dict)]
        made = [r.get("created_at") for r in pair]
        statuses = [r.get("status") for r in pair]
        if len(pair) != 2 or not all(isinstance(m, str) and m for m in made):
            continue
        if made[0] == made[1] or not all(isinstance(st, str) for st in statuses):
            continue
        if statuses[0] == statuses[1]:
            continue
        newer = 0 if str(made[0]) > str(made[1]) else 1
        for clause in rp.clauses(ev.reply):
            words = set(rp.tokens(clause))
            if bool(words & _NEWER) == bool(words & _OLDER):
                continue
            meant = newer if words & _NEWER else 1 - newer
            own, other = str(statuses[meant]), str(statuses[1 - meant])
            said_other = set(status_words(other)) <= words
            if said_other and not set(status_words(own)) <= words:
                which = "newer" if meant == newer else "older"
                problems.append(f"gives the {which} record the state {other}, but it is {own}")
    return list(dict.fromkeys(problems))


_WHICH = re.compile(r"\bwhich\b[^.?!]{0,200}\?", re.IGNORECASE)


def which_asked_again(ev: Evidence) -> str | None:
    """The reply asks which of two records is meant when the person has already said
    ("The newer one." -> "Which of the two do you mean?" again): the answer it asked for
    is on record, by the records' age or by a value only one of them holds."""
    reply = rp.own_text(ev.reply, ev.user_turns)
    if not _WHICH.search(reply[:TEXT_CAP]):
        return None
    last_user = ev.last_user_index
    asked_at = None
    pair: list[Any] = []
    for i, e in enumerate(ev.events[:last_user]):
        if e.kind == "call" and (found := two_records(e, lists=True)):
            pair = [r for r in found if isinstance(r, dict)]
        elif e.kind == "assistant" and pair and _WHICH.search(e.text[:TEXT_CAP]):
            asked_at = i
    if asked_at is None:
        return None
    for e in ev.events[asked_at + 1 : last_user + 1]:
        if e.kind != "user":
            continue
        words = set(rp.tokens(e.text[:TEXT_CAP]))
        if words & (_NEWER | _OLDER) or _names_one(e.text, pair):
            return "asked again which record is meant, though the person already said which"
    return None


def _names_one(text: str, records: list[Any]) -> bool:
    """The text names a value only one of the records holds (its creation date)."""
    low = text[:TEXT_CAP].casefold()
    for i, record in enumerate(records):
        others = [r for j, r in enumerate(records) if j != i]
        for k, v in record.items():
            value = str(v).casefold()
            if len(value) >= 4 and all(o.get(k) != v for o in others) and value in low:
                return True
    return False


def _after(ev: Evidence, event: Event) -> list[Event]:
    index = next(i for i, e in enumerate(ev.events) if e is event)
    return ev.events[index + 1 :]


def _tells_apart(text: str, records: list[Any]) -> bool:
    """The text names something unique to each of at least two records."""
    low = text.casefold()
    hits = 0
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            continue
        others = [r for j, r in enumerate(records) if j != i and isinstance(r, dict)]
        unique = [str(v) for k, v in record.items()
                  if all(o.get(k) != v for o in others) and str(v)]  # fmt: skip
        if any(u.casefold() in low for u in unique):
            hits += 1
    return hits >= 2


def unmet(ev: Evidence) -> tuple[set[str], set[str]]:
    """(what the reply asks the person for, the part of it the person has not given)."""
    wanted = asked_fields(ev, rp.own_text(ev.reply, ev.user_turns))
    have = given_fields(ev)
    return wanted, {w for w in wanted if not have.get(w, False)}


def claims_fault(text: str) -> bool:
    """The text blames a fault of the agent's own side ("the system is down", "our lookup
    is timing out")."""
    return any(rp.troubled(c) and own_side(c) for c in rp.clauses(text))


def stalled(ev: Evidence) -> str | None:
    """No call at all, and nothing in its place: an echo, pleasantries, a refusal that names
    nothing of the ask, a fault no call ever met, an ask-back for what was already given,
    or (the person having given what the tools take) a refusal of what the tools do.
    Asking for what is still missing, or for the person's decision on a named action, is
    not stalling."""
    if ev.calls:
        return None
    reply = ev.reply
    if rp.echoed(reply, ev.user_turns, ev.objects) and not answers_yes_or_no(ev):
        return "echoed the ask back and did nothing"
    own = rp.own_text(reply, ev.user_turns)
    if rp.content_free(own):
        return "said nothing of substance"
    if any(rp.stock_refusal(c) for c in rp.clauses(own)) and not rp.named_tools(own, ev.tools):
        return "declined with a refusal that names nothing of the ask"
    if claims_fault(own):
        return "blamed a fault or an inability though it never called a tool"
    wanted, missing = unmet(ev)
    if missing:
        return None
    if wanted - {"other"}:
        named = "/".join(sorted(w.replace("_", " ") for w in wanted - {"more", "other"}))
        return f"asked for the {named or 'details'} already given"
    if not ev.tools or not identifiers(ev.user_text):
        return None
    if offers_action(ev):
        return None
    if rp.refuses(own) and not rp.named_tools(own, ev.tools):
        # A refusal that names the operation it will not run ("I will not force
        # book_flight through") answers this request; a stock one could answer any.
        return "declined what its tools do, with what they need already given"
    return None


# What the world may say of a value the person gave that makes asking for it again fair:
# nothing found under it, two records under it, or the value refused as invalid.
_DOUBTED = ("not_found", "ambiguous", "rejected")
# Asked for once more: a verb of giving, then "again" in the same sentence.
_GIVE_AGAIN = _again_after(r"(?:provide|give|send|share|resend|repeat|tell|enter|confirm)", 60)


def asked_again_for_given(ev: Evidence) -> str | None:
    """After calls, the reply asks for details the person already gave, though no result
    put them in doubt ("please provide the correct flight id and passenger name" after
    the booking came back unreadable; "could you provide the order details again?" after
    two clean reads): the trouble, if any, was the tool's, and asking again sends the
    person round. Asking after a not-found, two records or a refused value is fair."""
    if not ev.calls:
        return None
    # Fields named in so many words: "tell me which you prefer" asks for a choice, not
    # for which record (the bare "which" reading `unmet` also takes).
    own = rp.own_text(ev.reply, ev.user_turns)
    wanted = asked_fields(ev, own, which=False)
    have = given_fields(ev)
    named = wanted - {"more", "other"}
    if any(not have.get(w, False) for w in named):
        return None
    if not named:  # "could you provide the order details again?": no field, but again
        again = any(rp.addressed(c) and _GIVE_AGAIN.search(c) for c in rp.clauses(own))
        if not again or not identifiers(ev.user_text):
            return None
        named = {"details"}
    if any(c.status in _DOUBTED or two_records(c, lists=True) for c in ev.calls):
        return None
    fields = "/".join(sorted(w.replace("_", " ") for w in named))
    return f"asked again for the {fields} already given, though no result put it in doubt"


def offers_action(ev: Evidence, tools: list[str] | None = None) -> bool:
    """The reply waits on the person's decision about a named action of its tools ("tell
    me and I will run cancel_order", "if you'd like, I can refund it")."""
    names = tools if tools is not None else ev.tools
    words = frozenset().union(*(tool_words(t) for t in names)) if names else frozenset()
    return any(rp.asked_person(c) and set(rp.tokens(c)) & words for c in rp.clauses(ev.reply))


def engages(ev: Evidence, tool: str) -> bool:
    """The reply speaks to the requested action itself: it names the tool or its verb
    ("cancel", "cancellation"), so it answers this request; a stock refusal could answer
    any (a bare object noun like "request" does not count)."""
    words = {tool, *rp.verb_forms(rp.tool_verb(tool))}
    own = rp.own_text(ev.reply, ev.user_turns)
    return any(set(rp.tokens(c)) & words for c in rp.clauses(own))


def needs_unmet(ev: Evidence) -> bool:
    """The reply asks for something the conversation does not hold yet (a fair ask-back);
    the person's own question quoted back asks for nothing."""
    return bool(unmet(ev)[1])


def delegated_calls(ev: Evidence) -> list[str]:
    """Tools the reply tells the person to call, or writes out, instead of calling them."""
    called = {c.tool for c in ev.calls}
    out = [f"wrote out a call to {t} instead of making it" for t in rp.printed_calls(
        ev.reply, ev.tools)]  # fmt: skip
    for tool, clause in rp.named_tools(ev.reply, ev.tools):
        offer = rp.asked_person(clause) and "yourself" not in clause.casefold()
        if (
            tool not in called
            and not rp.first_person(clause)
            and not offer
            and (tool not in ev.user_text)
        ):
            out.append(f"told the person to use {tool} instead of calling it")
    for name in rp.spoken_functions(ev.reply):
        if name not in ev.tools:  # no such tool: a function made up and handed over
            out.append(f"told the person to use a function it does not have ({name})")
    return list(dict.fromkeys(out))


# Things a person can be sent (general English): a promise of one needs a tool, an
# argument or a result that sends it.
_MESSAGES = frozenset(
    {
        "email",
        "e-mail",
        "emails",
        "mail",
        "letter",
        "text",
        "sms",
        "message",
        "messages",
        "notification",
        "notifications",
        "call",
        "callback",
    }
)
_DOCUMENTS = frozenset({"invoice", "invoices", "receipt", "receipts", "label", "labels",
                        "voucher", "vouchers", "coupon", "coupons", "certificate", "statement",
                        "brochure", "catalogue", "catalog", "newsletter"})  # fmt: skip
_SENDS = frozenset({"notify", "notification", "email", "mail", "send", "message", "sms", "text"})


def _undeliverable(ev: Evidence, clause: str) -> str | None:
    """A thing the clause promises the person will get that nothing in the rollout sends:
    no tool, argument or result names it (for an e-mail or a message, anything that
    notifies or sends counts)."""
    named = set(rp.tokens(clause)) & (_MESSAGES | _DOCUMENTS)
    if not named:
        return None
    names = {w for t in ev.tools for w in name_words(t)}
    for call in ev.calls:
        names |= {w for k, v in call.arguments.items() if v for w in name_words(k)}
        names |= {w for leaf in _keys(call.result) for w in name_words(leaf)}
    for thing in sorted(named):
        if thing in _MESSAGES and names & _SENDS:
            continue
        if thing.rstrip("s") in names or thing in names:
            continue
        return thing
    return None


def _documented(ev: Evidence, clause: str) -> bool:
    """The clause restates a time frame the system prompt gives ("you'll hear back within 3
    business days" where the policy says so): how things go, not a promise of its own."""
    spans = time_frames(clause)
    return bool(spans) and spans <= time_frames(ev.system_text)


def _keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [*value, *(k for v in value.values() for k in _keys(v))]
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    return []


def broken_promises(ev: Evidence) -> list[str]:
    """Promises in the reply that no tool can keep, or that nothing set in motion."""
    problems: list[str] = []
    called = {rp.tool_verb(c.tool) for c in ev.calls}
    accepted = any(ev.accepted(c) for c in ev.writes())
    for promise in rp.promises(ev.reply):
        words = set(rp.tokens(promise.text))
        names_called = bool(words & {w for t in ev.calls for w in tool_words(t.tool)})
        if promise.kind == "outcome":
            thing = _undeliverable(ev, promise.text)
            if thing is not None:
                problems.append(f"promises a{'n' if thing[0] in 'aeiou' else ''} {thing} "
                                f"no tool sends: {promise.text!r:.70}")  # fmt: skip
            elif not accepted and not (not ev.calls and _documented(ev, promise.text)):
                problems.append(f"promises an outcome nothing set in motion: {promise.text!r:.70}")
        elif promise.kind == "others":
            problems.append(f"promises someone else will {promise.verb}: {promise.text!r:.70}")
        elif promise.verb == "later":
            problems.append(f"promises to act after the conversation: {promise.text!r:.70}")
        elif promise.kind == "self_done":
            if not (rp.doable(promise.verb, ev.tool_verbs) or names_called):
                problems.append(f"says it did what no tool does: {promise.text!r:.70}")
        elif not rp.doable(promise.verb, ev.tool_verbs):
            problems.append(f"promises what no tool can do: {promise.text!r:.70}")
        else:
            verb = rp.covers(promise.verb, ev.tool_verbs)
            if verb is not None and not ({verb} & called):
                problems.append(f"promises to {promise.verb} but never called a tool for it")
    return problems
