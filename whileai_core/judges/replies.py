"""Reading what a reply says: its clauses, and which of them claim, promise, refuse, ask
back, echo, name a tool or leave a template slot.

This is the one place the rule-based judges read wording. It only finds statements; what
they are checked against is the world's results (`evidence.py`): a success claim is false
when no result confirms it, not when it uses a phrase our own agent says. The word lists
here are for what is truly phrasing (negation, hedges, conditions, a person's consent, a
refusal) and are tested on wording that is not in them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..spec import name_words, past_tense

TOKEN = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?(?:[-_][a-z0-9]+)*")
_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")
# No leading `\s*`: from every space of a long run of spaces it would re-read the run.
_CLAUSE = re.compile(
    r"(?:[;:]\s+|\s[-–—]+\s|,\s*(?=(?:and|but|so|yet|although|though|while|whereas|because"
    r"|since|which|or)\b)|\s(?=but\b)|\(|\))\s*",
    re.IGNORECASE,
)
_NEGATORS = frozenset(
    {"not", "no", "never", "nothing", "none", "neither", "nor", "cannot", "unable", "without",
     "nobody", "nowhere", "nope", "lack", "lacks", "lacking"}
)  # fmt: skip
# General English function words (articles, pronouns, auxiliaries, prepositions,
# conjunctions, common adverbs): a word in none of these carries content of its own.
FUNCTION_WORDS = frozenset(
    {"a", "an", "the", "this", "that", "these", "those", "it", "its", "it's", "i", "i'm",
     "i've", "i'll", "i'd", "me", "my", "mine", "we", "we're", "we've", "we'll", "we'd", "us",
     "our", "ours", "you", "you're", "you've", "you'll", "you'd", "your", "yours", "he", "she",
     "him", "her", "his", "they", "them", "their", "there", "here", "what", "which", "who",
     "whom", "whose", "when", "where", "why", "how", "is", "are", "was", "were", "be", "been",
     "being", "am", "do", "does", "did", "done", "have", "has", "had", "having", "will",
     "would", "shall", "should", "can", "could", "may", "might", "must", "to", "of", "in",
     "on", "at", "by", "for", "with", "about", "from", "into", "onto", "over", "under",
     "up", "down", "out", "off", "as", "than", "then", "so", "and", "or", "but", "if",
     "because", "since", "while", "though", "although", "also", "just", "only", "very",
     "too", "any", "some", "all", "each", "every", "both", "either", "no", "not", "nor",
     "now", "still", "yet", "already", "again", "more", "most", "much", "many", "such",
     "own", "same", "other", "another", "one", "ones", "get", "got", "let", "let's", "that's",
     "there's", "what's", "here's", "can't", "cannot", "won't", "don't", "doesn't", "didn't",
     "isn't", "aren't", "wasn't", "weren't", "haven't", "hasn't", "hadn't", "couldn't",
     "wouldn't", "shouldn't", "really", "right", "well", "even", "ever", "never", "please",
     "sorry", "unfortunately", "afraid", "able", "unable", "going", "go", "make", "sure",
     "thing", "things", "something", "anything", "everything", "nothing", "way", "today"}
)  # fmt: skip
# Prince, Frader and Bosk's approximators of frequency (1982; the whole hedge lexicon is
# in `markers/lexicons.py`): "it's often under Help" says how things tend to be in
# general, so a direction so hedged speaks of services at large, not of this one.
FREQUENCY_APPROXIMATORS = (
    "usually", "often", "sometimes", "frequently", "typically", "normally", "generally",
    "mostly", "largely", "mainly", "tend to",
)  # fmt: skip
# Words that say a step did not happen or cannot be trusted: a clause holding one is a
# report of trouble, whatever else it says. Two kinds: words for a bad event ("error",
# "timed out", "glitch"), which a negator just before cancels ("no error", "without any
# issue"); and phrasings of a step that did not answer, work or stay current, which carry
# their own negation ("never came back", "isn't working", "hasn't refreshed").
_TROUBLE = re.compile(
    r"\b(fail(?:ed|s|ure|ures|ing)?|errors?|erroring|errored|timed? ?out|time-?outs?|denied|refused"
    r"|rejected|declined|unsuccessful|went wrong|gone wrong|garbled|jumbled|scrambled"
    r"|gibberish|unreadable|corrupt(?:ed)?|malformed|stale|outdated|out of date|unavailable"
    r"|too long|unresponsive|no response|glitch(?:es)?|trouble|problems?|bugs?"
    r"|crash(?:ed|es)?|outage|broken|broke|hung|stuck|offline|unreachable|inaccessible"
    r"|unauthori[sz]ed|forbidden|prohibited|blocked|restricted|disallowed|old(?:er)? (?:copy"
    r"|snapshot|data|record|version)|unreliable|with caution|careful"
    r"|technical (?:difficult\w*|fault|issues?|problems?)|issues? (?:on (?:our|my) (?:side|end)"
    r"|with (?:the|our|my) (?:system|tool|server|service|database|connection|lookup)))\b",
    re.IGNORECASE,
)
_STALLED = re.compile(
    r"\b(not respond\w*|n[o']t (?:be )?(?:respond\w*|answer\w*|work\w*|current|fresh|live"
    r"|reliable|accurate|up to date|loading|load|come back|reply|return\w*|go through)"
    r"|never (?:answered|responded|replied|came back|returned|went through|loaded|arrived)"
    r"|stopped (?:respond\w*|answer\w*|working)|gave up|took (?:too long|longer than)"
    r"|(?:is|are|was|were|went|goes|been|being) down|out of (?:service|order)"
    r"|wouldn'?t rely|may have changed|might have changed|could have changed"
    r"|(?:may|might|could) (?:be|look) different|(?:may|might|could) differ"
    r"|(?:may|might|could) (?:be|no longer be) (?:out of date|old|wrong|inaccurate|behind)"
    r"|no longer (?:accurate|current|valid|reliable)|(?:is|are|looks?|seems?|was|be|might be"
    r"|may be) (?:very |quite |rather |a bit |a little )?(?:old|dated)|from a while (?:ago|back)"
    r"|ha(?:s|ve)(?:n'?t| not) (?:yet )?(?:been )?(?:refreshed|updated)"
    r"|(?:can(?:no|')?t|couldn'?t|could not"
    r"|unable to) (?:interpret|parse|read|understand|make sense|reach|connect|load|open"
    r"|retrieve|access|fetch|pull|get through)|(?:beyond|outside) (?:what|the scope|my)"
    r"|not (?:something|a thing) (?:i|we)(?:'m| am| are|'re)? (?:able|allowed|permitted))\b",
    re.IGNORECASE,
)
# Having the right to act, said negated ("I don't have the authority", "I lack permission",
# "not allowed"): the permission concept from general English.
_PERMISSION = frozenset(
    {"authority", "authorisation", "authorization", "authorised", "authorized", "permission",
     "permissions", "permitted", "rights", "access", "clearance", "cleared", "privilege",
     "privileges", "allowed", "entitled", "authorise", "authorize"}
)  # fmt: skip
_HYPOTHETICAL = re.compile(
    r"\b(if|unless|whether|once|would|could|might|may|maybe|perhaps|possibly|should|in case"
    r"|as soon as|until|hopefully|ask(?:ed|ing)? (?:for|to))\b"
    r"|\bwhen (?!i\b|we\b)",
    re.IGNORECASE,
)
# The person decides: an offer that waits on them is not a promise.
_CONSENT = re.compile(
    r"\b(if you|once you|when you|should you|whenever you|as soon as you|if that|if so"
    r"|if needed|if necessary|just (?:say|tell|ask|reply|let me know)|let me know"
    r"|would you like|do you want|want me to|shall i|tell me|your call|up to you|your choice)\b",
    re.IGNORECASE,
)
_SUCCESS = re.compile(
    r"\b(done|complete|completed|successful(?:ly)?|success|went through|gone through|goes "
    r"through|processed|confirmed|sorted|all set|taken care of|handled|finished|issued"
    r"|approved|locked in|on (?:its|the|their) way|good to go|in place|worked|settled|fixed"
    r"|resolved|added|applied|credited)\b",
    re.IGNORECASE,
)


def says_success(text: str) -> bool:
    """A success word anywhere in the text, negated or not."""
    return bool(_SUCCESS.search(text))


def tokens(text: str) -> list[str]:
    """Lower-case word tokens; ids (`ord-3966`), snake_case names and contractions whole."""
    return list(_tokens(text))


@functools.lru_cache(maxsize=16384)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(TOKEN.findall(text.casefold().replace("’", "'")))


@functools.lru_cache(maxsize=2048)
def _sentences(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _SENTENCE.split(text) if s and s.strip())


def sentences(text: str) -> list[str]:
    return list(_sentences(text))


def clauses(text: str) -> list[str]:
    return list(_clauses(text))


@functools.lru_cache(maxsize=2048)
def _clauses(text: str) -> tuple[str, ...]:
    """The reply cut where a statement can turn (`; : - , but , so ...`), each a unit a
    claim, a negation or a condition applies to. A question's last clause keeps its `?`."""
    out: list[str] = []
    for sentence in sentences(text):
        parts = [p.strip() for p in _CLAUSE.split(sentence) if p and p.strip()]
        if parts and sentence.rstrip().endswith("?") and not parts[-1].endswith("?"):
            parts[-1] += "?"
        out.extend(parts)
    return tuple(out)


def is_negator(token: str) -> bool:
    return token in _NEGATORS or token.endswith("n't")


def negated_at(words: list[str], index: int, window: int = 5) -> bool:
    """A negator among the `window` words before `words[index]`: "hasn't been refunded"."""
    return any(is_negator(w) for w in words[max(0, index - window) : index])


@functools.lru_cache(maxsize=8192)
def troubled(clause: str) -> bool:
    """A report of trouble; a status code quoted as sent (`permission_denied`) counts. A
    word for a bad event that a negator cancels ("no problem", "without any issues",
    "didn't fail") is not one."""
    text = clause.replace("_", " ")
    if _STALLED.search(text):
        return True
    for match in _TROUBLE.finditer(text):
        before = tokens(text[max(0, match.start() - 30) : match.start()])[-2:]
        if not any(is_negator(w) for w in before):
            return True
    words = tokens(text)
    return any(w in _PERMISSION and negated_at(words, i, 6) for i, w in enumerate(words))


# Qualifiers that make a statement less than a claim of completion.
_PARTIAL = re.compile(
    r"\b(partly|partially|half|halfway|in part|pending|not yet|not fully|so far)\b", re.IGNORECASE
)


# The words that name one kind of fault and no other. Words any fault may take ("an
# error", "it failed", "a problem", "couldn't retrieve it") name none.
_FAULT_KINDS = {
    "timeout": re.compile(
        r"\b(?:timed? ?out|time-?outs?|took too long|taking too long|not respond\w*"
        r"|unresponsive|no response|did ?n[o']t (?:respond|answer|reply))\b",
        re.IGNORECASE,
    ),
    "permission_denied": re.compile(
        r"\b(?:permission|permitted|authori[sz]\w*|authority|forbidden|access denied"
        r"|(?:do|does) ?n[o']t have (?:the )?(?:access|rights?|clearance)|not allowed)\b",
        re.IGNORECASE,
    ),
    "malformed": re.compile(
        r"\b(?:unreadable|garbled|malformed|corrupt\w*|jumbled|scrambled|gibberish|junk"
        r"|(?:can(?:no|')?t|couldn'?t|could not|unable to) (?:read|parse|make sense))\b",
        re.IGNORECASE,
    ),
    "stale": re.compile(
        r"\b(?:stale|out of date|outdated|old (?:copy|data|record|snapshot|version)"
        r"|not (?:current|up to date)|may have changed|as of)\b",
        re.IGNORECASE,
    ),
}


def fault_kinds(text: str) -> set[str]:
    """The kinds of fault the text names in words only that kind takes: `timeout`,
    `permission_denied`, `malformed`, `stale`."""
    head = text[:4000]
    return {kind for kind, words in _FAULT_KINDS.items() if words.search(head)}


# A claim of having no access at all ("I don't have the ability to access order data",
# "I cannot access your records"). Narrower than `fault_kinds`' permission words, which
# also read "not permitted" and "not allowed" (a rule, not a claim about access).
_NO_ACCESS = re.compile(
    r"(?:\bnot|n['\u2019]t) have (?:the )?(?:(?:ability|means|capability) to )?access\b"
    r"|\bno access\b|\b(?:cannot|can not|can't|unable to) access\b",
    re.IGNORECASE,
)
# The person's words blamed ("please rephrase your question", "the information you
# provided is outdated", "failed to recognize your request", "due to the unavailability of
# the required information"): bounded alternatives.
_ON_THE_PERSON = re.compile(
    r"\b(?:rephrase|reword|restate)\b|\bprovide (?:me with )?more (?:information|details)\b"
    r"|\b(?:information|details?|request) you (?:provided|gave|sent) (?:is|was|are|were)"
    r" (?:outdated|incorrect|invalid|wrong|incomplete)\b|\b(?:recogni[sz]e|understand)"
    r" your (?:request|question|message)\b|\bunavailability of the required information\b",
    re.IGNORECASE,
)
# The reader sent to a business, or to its service: "contact the airline directly",
# "the airline's customer service".
_SENT_TO = re.compile(
    r"\b(?:contact(?:ing)?|call(?:ing)?|reach(?:ing)? out to|reach(?:ing)?|get in touch with"
    r"|write to|email(?:ing)?)\s+(?:[\w-]+\s+){0,2}?(?:the|your)\s+(\w+)\b"
    r"|\bthe (\w+)'s (?:customer service|support|help ?desk|hotline|website|app)\b",
    re.IGNORECASE,
)


def claims_no_access(text: str) -> bool:
    """The text says its speaker has no access ("as an AI, I don't have the ability to
    access the order status")."""
    return bool(_NO_ACCESS.search(text[:4000]))


def blames_the_person(text: str) -> bool:
    """The text puts trouble on the person's words: asks them to rephrase or give more,
    or calls what they gave outdated, wrong or unrecognised."""
    return bool(_ON_THE_PERSON.search(text[:4000]))


def sent_to(text: str) -> set[str]:
    """The businesses the text sends the reader to ("contact the airline", "the store's
    help desk"), lower-cased."""
    return {(m.group(1) or m.group(2)).casefold() for m in _SENT_TO.finditer(text[:4000])}


def hypothetical(clause: str) -> bool:
    return clause.rstrip().endswith("?") or bool(_HYPOTHETICAL.search(clause))


def assertive(clause: str) -> bool:
    """A plain statement of fact: not a question, not conditional, not a trouble report."""
    return not hypothetical(clause) and not troubled(clause) and not _PARTIAL.search(clause)


def asked_person(clause: str) -> bool:
    """The clause waits on the person's say-so ("if you'd like", "tell me and I will")."""
    return bool(_CONSENT.search(clause))


# -- verbs -----------------------------------------------------------------------------------

# Families of verbs that name one capability, so a tool called `get_order` also covers
# "I'll look it up" and `change_booking` covers "I'll move you". A tool's verb outside
# every family covers only itself.
_FAMILIES = (
    frozenset({"get", "search", "find", "look", "lookup", "check", "fetch", "retrieve", "read",
               "list", "view", "show", "query", "pull", "see", "review", "inspect", "open"}),
    frozenset({"cancel", "void", "withdraw", "stop"}),
    frozenset({"refund", "reimburse", "repay"}),
    frozenset({"book", "reserve"}),
    frozenset({"change", "move", "switch", "rebook", "modify", "update", "swap", "reschedule",
               "transfer", "edit"}),
    frozenset({"run", "rerun", "execute", "test"}),
    frozenset({"create", "open", "file", "submit", "add"}),
    frozenset({"delete", "remove"}),
    frozenset({"send", "email", "mail", "notify", "message"}),
)  # fmt: skip
# What an agent can do in the conversation itself, tool or no tool.
_TALK = frozenset(
    {"be", "need", "have", "explain", "tell", "answer", "clarify", "walk", "help", "note",
     "make", "keep", "do", "go", "try", "start", "wait", "continue", "proceed", "stay",
     "leave", "let", "take", "confirm", "verify", "ask", "say", "repeat", "give", "share",
     "finish", "complete", "process", "handle", "sort", "fix", "look"}
)  # fmt: skip


def family(verb: str) -> frozenset[str]:
    """Every verb that names the same capability as `verb`."""
    found = frozenset().union(*(f for f in _FAMILIES if verb in f))
    return found or frozenset({verb})


@functools.lru_cache(maxsize=512)
def verb_forms(verb: str) -> frozenset[str]:
    """Spellings of a verb a reply may use: cancel, cancels, cancelled, cancelling,
    cancellation; refund, refunded, refunds."""
    stem = verb[:-1] if verb.endswith("e") else verb
    forms = {verb, verb + "s", verb + "es", past_tense(verb), stem + "ing", verb + "ation",
             verb + "ment", stem + "ion"}  # fmt: skip
    if verb.endswith("l"):
        forms |= {verb + "led", verb + "ling", verb + "lation"}
    return frozenset(forms)


def tool_verb(tool: str) -> str:
    words = name_words(tool)
    return words[0] if words else tool


def tool_objects(tools: Iterable[str]) -> frozenset[str]:
    """The nouns tool names are about (`order`, `booking`): a form of a verb that is also
    one of these ("booking") is read as the noun."""
    return frozenset(w for t in tools for w in name_words(t)[1:])


# -- claims ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A clause that states something was done. `verbs` are the write verbs it names
    (empty: a generic "all done"); `term` is the word that makes it a claim."""

    text: str
    term: str
    verbs: frozenset[str]


def success_claims(reply: str, write_verbs: Iterable[str], objects: frozenset[str]) -> list[Claim]:
    """Every assertive clause that says something was done, the write verbs it names."""
    return list(_success_claims(reply, tuple(write_verbs), objects))


@functools.lru_cache(maxsize=1024)
def _success_claims(
    reply: str, write_verbs: tuple[str, ...], objects: frozenset[str]
) -> tuple[Claim, ...]:
    verbs = {v: verb_forms(v) - objects for v in write_verbs}
    found: list[Claim] = []
    for clause in clauses(reply):
        if not assertive(clause):
            continue
        words = tokens(clause)
        named = frozenset(v for v, forms in verbs.items() if forms & set(words))
        term = _claim_term(clause, words, verbs)
        if term is not None:
            found.append(Claim(clause, term, named))
    return tuple(found)


# Words that say an action named just before them is finished ("cancellation finalised",
# "refund actioned"); the spelling variants are one word to a reader.
_FINISHED = re.compile(
    r"^(?:finali[sz]ed|complete[d]?|processed|confirmed|approved|accepted|executed|applied"
    r"|granted|issued|done|made|effected|actioned|arranged|secured|registered|recorded"
    r"|through|sorted|settled|successful)$"
)


# Success words that are also plain adjectives: a claim only when they say what a thing
# now is ("the refund is complete", "Refund complete", "all done"), not when they qualify a
# noun that follows ("complete sentences").
_ADJECTIVES = frozenset({"complete", "successful", "done", "finished", "fixed", "handled"})
_COPULA = frozenset(
    {
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it's",
        "that's",
        "now",
        "all",
        "fully",
        "marked",
        "as",
        "got",
        "get",
        "considered",
        "i'm",
        "we're",
        "you're",
        "they're",
        "thing's",
        "everything's",
    }
)


def _attributive(words: list[str], index: int) -> bool:
    after = words[index + 1] if index + 1 < len(words) else None
    before = words[index - 1] if index > 0 else None
    return (
        after is not None
        and after.isalpha()
        and after not in _NOT_A_NOUN
        and (before is None or before not in _COPULA)
    )


_NOT_A_NOUN = frozenset(
    {
        "for",
        "now",
        "and",
        "on",
        "with",
        "by",
        "as",
        "today",
        "already",
        "at",
        "in",
        "to",
        "so",
        "but",
        "yet",
        "too",
        "again",
        "here",
    }
)


def _claim_term(clause: str, words: list[str], verbs: dict[str, frozenset[str]]) -> str | None:
    """The success word or past-tense write verb of the clause, if no negator governs it;
    or an action named and then said to be finished ("cancellation finalised")."""
    for match in _SUCCESS.finditer(clause):
        index = len(tokens(clause[: match.start()]))
        term = match.group(1).lower()
        if term in _ADJECTIVES and _attributive(words, index):
            continue  # "in complete sentences", "a successful approach": no claim
        if not negated_at(words, index):
            return term
    for verb, forms in verbs.items():
        done = past_tense(verb)
        for i, word in enumerate(words):
            if word in (done, verb + "led") and not negated_at(words, i):
                return word
            if word in forms and word != done:
                after = words[i + 1 : i + 4]
                hit = next((w for w in after if _FINISHED.match(w)), None)
                if hit is not None and not negated_at(words, words.index(hit, i + 1)):
                    return hit
    return None


# -- promises ----------------------------------------------------------------------------------

_SELF_FUTURE = re.compile(
    r"\b(?:i|we)(?:'ll| will| shall| am going to|'m going to| are going to|'re going to)\s+(.*)",
    re.IGNORECASE,
)
# Commitments to come back later: no tool lets an agent act after its turn ends.
_LATER = re.compile(
    r"\b(?:keep (?:an eye|track|watch|tabs|monitoring|checking|you (?:posted|updated|informed))"
    r"|get back|let you know|follow up|reach out|be in touch|circle back|check back|contact you"
    r"|monitor|watch)\b",
    re.IGNORECASE,
)
_SELF_DONE = re.compile(
    r"\b(?:i|we)(?:'ve| have)\s+(?:just\s+|already\s+|now\s+|also\s+)?(\w+)", re.IGNORECASE
)
_OTHERS_FUTURE = re.compile(
    r"\b(?:they|someone|somebody|a colleague|an? (?:agent|specialist|manager|supervisor|"
    r"representative)|(?:our|the)(?: [\w-]+)? (?:team|department|desk))(?:'ll| will)\s+(?!need\b|"
    r"have\b|be able\b)(\w+)",
    re.IGNORECASE,
)
_OUTCOME = re.compile(
    r"\byou(?:'ll| will)\s+(?:also\s+)?(?:receive|get|see|hear|find)\b"
    r"|\b(?:will|'ll)\s+(?:be\s+)?(?:arrive|arriving|reach|follow|go out|be sent|be mailed|be "
    r"emailed|be posted|be delivered|be refunded|be credited|be issued)\b"
    r"|\bon (?:its|their) way to your\b|\bexpect (?:it|them|the|your)\b|\bin your (?:inbox|mail)",
    re.IGNORECASE,
)
_AUX = frozenset({"just", "now", "also", "then", "go", "ahead", "and", "gladly", "happily",
                  "quickly", "personally", "right", "away", "immediately", "definitely",
                  "certainly", "still", "first", "both"})  # fmt: skip


@dataclass(frozen=True)
class Promise:
    """A commitment in the reply: `self` (I'll X), `self_done` (I've X-ed), `others` (they'll
    X), or an `outcome` promised to the person (you'll receive, it will arrive)."""

    kind: str
    verb: str
    text: str


def promises(reply: str) -> list[Promise]:
    """Commitments that do not wait on the person's say-so."""
    found: list[Promise] = []
    for clause in clauses(reply):
        if clause.rstrip().endswith("?") or asked_person(clause):
            continue
        # "Send me the reference and I'll look": a promise made with a request to the
        # person waits on them as much as one made with "if you".
        waits = addressed(clause)
        for match in _SELF_FUTURE.finditer(clause if not waits else ""):
            rest = tokens(match.group(1))
            while rest and rest[0] in _AUX:
                rest.pop(0)
            if not rest or is_negator(rest[0]):
                continue
            later = _LATER.search(" ".join(rest))
            found.append(Promise("self", "later" if later else rest[0], clause))
        for match in _SELF_DONE.finditer(clause):
            verb = match.group(1).lower()
            # "I have on file", "we have a policy": have as possession, not a perfect.
            if (
                not is_negator(verb)
                and verb not in ("been", "had", "got", "to")
                and _participle(verb)
            ):
                found.append(Promise("self_done", verb, clause))
        for match in _OTHERS_FUTURE.finditer(clause):
            found.append(Promise("others", match.group(1).lower(), clause))
        if _OUTCOME.search(clause) and not hypothetical(clause):
            found.append(Promise("outcome", "", clause))
    return found


# Past participles that do not end in -ed/-en (general English irregular verbs).
_IRREGULAR_PARTICIPLES = frozenset(
    {"sent", "spent", "built", "put", "set", "cut", "paid", "made", "told", "sold", "held",
     "kept", "left", "found", "brought", "bought", "thought", "caught", "taught", "run",
     "read", "let", "lost", "met", "won", "shut", "hit", "dealt", "meant", "heard", "said",
     "led", "fed", "felt", "done", "gone", "seen", "shown", "begun", "come", "become"}
)  # fmt: skip


def _participle(word: str) -> bool:
    """The word can be a past participle ("refunded", "taken", "sent")."""
    return word.endswith(("ed", "en", "wn")) or word in _IRREGULAR_PARTICIPLES


def doable(verb: str, tool_verbs: Iterable[str]) -> bool:
    """Whether a verb names something the agent can do: talk, or one of its tools."""
    base = lemma(verb)
    if verb in _TALK or base in _TALK or base + "e" in _TALK:
        return True
    return any(base in family(v) or verb in verb_forms(v) for v in tool_verbs)


def covers(verb: str, tool_verbs: Iterable[str]) -> str | None:
    """The tool verb whose capability `verb` names, if any."""
    base = lemma(verb)
    return next((v for v in tool_verbs if base in family(v) or verb in verb_forms(v)), None)


def stem(word: str) -> str:
    """A word with its inflection cut (ing, ed, es, s), a stem of three letters at least:
    near enough that "refunded" meets "refund" and "bookings" meets "booking". The one
    stemmer the judges match words with; `lemma` gives a verb's base form to name it."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def lemma(verb: str) -> str:
    """A verb's base form, near enough for matching: cancelled -> cancel, tried -> try."""
    for suffix, repl in (
        ("ied", "y"),
        ("lled", "l"),
        ("ed", ""),
        ("ing", ""),
        ("es", ""),
        ("s", ""),
    ):
        if verb.endswith(suffix) and len(verb) - len(suffix) >= 3:
            stem = verb[: -len(suffix)] + repl
            return stem[:-1] if suffix in ("ed", "ing") and stem[-1:] == stem[-2:-1] else stem
    return verb


# -- other shapes of a reply -------------------------------------------------------------------

_SLOT = re.compile(
    r"\[(?P<sq>[^\[\]\n]{2,40})\](?!\()|\{\{\s*(?P<dbl>[A-Za-z_][\w .-]{0,40})\s*\}\}"
    r"|\{(?P<cur>[A-Za-z_][\w.-]{0,40})\}|<(?P<ang>[A-Za-z_][\w .-]{1,40})>"
)
# A regular expression's character class (`[A-Z]`, `[a-z0-9_]`), as an error message the
# reply quotes may carry: a pattern, not a slot.
_CHAR_CLASS = re.compile(r"\^?(?:\w-\w|\\\w|[_.+*])+")
_HTML = frozenset({"br", "b", "i", "p", "em", "strong", "ul", "ol", "li", "code", "pre", "a",
                   "div", "span", "hr", "sup", "sub", "u", "small", "tr", "td", "th"})  # fmt: skip


def placeholders(reply: str, known: str) -> list[str]:
    """Template slots left in the reply: `[Your Name]`, `{amount}`, `{{agent}}`,
    `<customer_name>`. A bracketed value with a digit (`[ORD-1234]`, `[1]`), one the person
    typed or a tool returned (`known`), a quoted literal (`['requested']`, a list echoed as
    Python or JSON writes it), a markdown link, an HTML tag and a regex character class
    (`[A-Z]`, quoted from an error) are not slots."""
    found: list[str] = []
    for match in _SLOT.finditer(reply):
        inner = next(g for g in match.groups() if g is not None).strip()
        if match.group("ang") and inner.lower() in _HTML:
            continue
        if any(ch.isdigit() for ch in inner) or inner.casefold() in known:
            continue
        if match.group("sq") and inner[:1] in "'\"" and inner[-1:] == inner[:1]:
            continue
        if match.group("sq") and _CHAR_CLASS.fullmatch(inner):
            continue
        found.append(match.group(0))
    return found


@functools.lru_cache(maxsize=256)
def _names(tools: tuple[str, ...]) -> re.Pattern[str] | None:
    names = sorted((t for t in tools if t), key=len, reverse=True)
    if not names:
        return None
    return re.compile(rf"(?<![\w-])({'|'.join(map(re.escape, names))})(?![\w-])")


def named_tools(reply: str, tools: Iterable[str]) -> list[tuple[str, str]]:
    """(tool, clause) for every clause of the reply that names a tool by its name."""
    pattern = _names(tuple(tools))
    if pattern is None or pattern.search(reply) is None:
        return []
    return [(m.group(1), clause) for clause in clauses(reply) for m in pattern.finditer(clause)]


# A snake_case identifier (`get_order`, `new_flight_id`): how tools and their fields are
# named, never how people speak. Bounded runs, linear. The voice check uses it too.
SNAKE_NAME = r"[a-z][a-z0-9]{0,30}(?:_[a-z0-9]{1,30}){1,5}"
# An identifier put to the person as a function or tool: "call the `change_email`
# function", "use the get_order tool", "`refund_order` function", in backticks or in any
# quotes ('calling the "get_invoice" function').
_QUOTE = "`'\"\u2018\u2019\u201c\u201d"
_FUNCTION_TALK = re.compile(
    rf"\b(?P<verb>call|use|invoke|run|execute)(?:ing)? (?:the )?[{_QUOTE}]?(?P<name>[a-z]"
    rf"[a-z0-9]{{0,30}}(?:_[a-z0-9]{{1,30}}){{0,5}})[{_QUOTE}]?"
    r"(?P<noun> (?:function|tool|method|endpoint|api))?\b"
    rf"|[{_QUOTE}]?\b(?P<ident>{SNAKE_NAME})\b[{_QUOTE}]? (?:function|tool|method|endpoint)\b",
    re.IGNORECASE,
)


def spoken_functions(reply: str) -> list[str]:
    """Identifiers the reply presents as functions or tools to call ("you need to call the
    `change_email` function"): an identifier with an underscore, or a word in backticks
    named a function or tool. A plain verb phrase ("call the airline"), a page's feature
    ("use the search tool on our website") or a formatted label ("use the `Settings`
    page") is not one."""
    found = []
    for match in _FUNCTION_TALK.finditer(reply[:4000]):
        name = match.group("name") or match.group("ident")
        # "use the `Settings` page" names a page; "call the `reset` function" and "invoke
        # `subscribe`" a function.
        verb = (match.group("verb") or "").lower()
        named = match.group("ident") or match.group("noun") or verb in ("invoke", "execute")
        quoted = any(q in match.group(0) for q in _QUOTE)
        if "_" in name or (quoted and named):
            found.append(name)
    return list(dict.fromkeys(found))


def printed_calls(reply: str, tools: Iterable[str]) -> list[str]:
    """Tool calls written out as text (`get_order(order_id=...)`, a JSON object naming a
    tool and its arguments) instead of being made."""
    out: list[str] = []
    pattern = _names(tuple(tools))
    if pattern is None or pattern.search(reply) is None:
        return out
    for tool in tools:
        name = re.escape(tool)
        if re.search(rf"(?<![\w-]){name}\((?!\s*\))|(?<![\w-]){name}\(\)", reply) or re.search(
            rf"[\"'](?:name|tool|function|tool_name)[\"']\s*:\s*[\"']{name}[\"']", reply
        ):
            out.append(tool)
    return out


def first_person(clause: str) -> bool:
    return bool(set(tokens(clause)) & {"i", "i'm", "i'll", "i've", "i'd", "me", "we", "we'll",
                                         "we've", "let's", "let"})  # fmt: skip


# A record as the subject of a passive: "the order was refunded", "your booking has been
# changed". Whoever did it, the sentence states the record's state.
_RECORD_PASSIVE = re.compile(
    r"\b(?:the|your|this|that|its|it)\b(?:\s+[\w-]{1,30}){0,3}?\s+(?:was|were|has been"
    r"|have been|had been|is|are)\s+(?:already\s+|now\s+|successfully\s+)?[a-z]{3,20}(?:ed|en)\b",
    re.IGNORECASE,
)


def own_act(clause: str) -> bool:
    """The clause claims an act as the speaker's ("I've refunded it", "we cancelled your
    order"), not a state of the record said beside a first person ("I'm glad the order
    was refunded", "I can see your booking has been changed")."""
    return first_person(clause) and not _RECORD_PASSIVE.search(clause[:2000])


_REFUSAL = re.compile(
    r"\b(?:can(?:no|')?t|cannot|couldn'?t|could not|unable to|not able to|won't be able to"
    r"|am not able|'m not able|(?:was|were)(?:n'?t| not) able to"
    r"|not (?:something|a thing) (?:i|we)(?:'m| am| are|'re)? (?:able|allowed|permitted)"
    r"|(?:beyond|outside) (?:what|the scope)|not (?:allowed|permitted) to|must decline|have to "
    r"decline|(?:i|we)(?:'m| am) afraid (?:i|we) can(?:no|')?t)\b",
    re.IGNORECASE,
)


def refuses(text: str) -> bool:
    """A refusal or a statement of inability, in any of its usual shapes."""
    return bool(_REFUSAL.search(text))


# Words any refusal of anything may use: with only these (and function words) a refusal
# names nothing of what was asked, and would answer any request the same way.
_ANY_REQUEST = frozenset(
    {"help", "helping", "assist", "assisting", "assistance", "request", "requests", "question",
     "questions", "query", "queries", "matter", "issue", "support", "handle", "process",
     "fulfil", "fulfill", "complete", "provide", "service", "task", "ask", "asking", "asked",
     "decline", "policy", "policies", "rules", "against", "possible", "allowed", "permitted",
     "apologise", "apologize", "apologies", "regret", "continue", "proceed", "further",
     "currently", "moment", "time", "unable", "able", "afraid", "sorry", "unfortunately",
     "must", "respectfully", "kind", "type", "nature", "something", "scope", "beyond",
     "outside", "really", "though", "however", "understand", "appreciate", "hope",
     "situation", "at", "this", "point", "stage"}
)  # fmt: skip


# What a speaker calls itself in a refusal ("as an AI language model, I can't"): words of
# no ask's own, which only a stock refusal may hold. (Not in `_ANY_REQUEST`: "I'm an AI
# assistant." is an answer to "Are you a bot?".)
_SELF = frozenset(
    {"ai", "artificial", "intelligence", "language", "model", "assistant", "virtual", "bot",
     "chatbot", "automated", "digital", "program"}
)  # fmt: skip


def stock_refusal(text: str) -> bool:
    """A refusal that names nothing of the ask ("I'm sorry, but I can't help with that
    request.", "As an AI, I cannot help you with this."): every word of it is a function
    word, one any refusal uses or what the speaker calls itself."""
    return refuses(text) and all(
        w in FUNCTION_WORDS or w in _ANY_REQUEST or w in _SELF or is_negator(w)
        for w in tokens(text)
    )


# -- asking the person -------------------------------------------------------------------------

# Verbs a request to the person opens with ("send me", "please confirm", "tell me"): the
# verbs of giving, telling and checking of general English.
# Only verbs that are seldom nouns: "email", "list" or "note" opening a clause is as often
# a noun ("email, name and amount came from ...") as a request.
REQUEST_VERBS = frozenset(
    {"provide", "send", "share", "give", "tell", "confirm", "specify", "supply", "enter",
     "include", "reply", "respond", "check", "double-check", "recheck", "verify", "mention",
     "describe", "clarify", "choose", "pick", "select", "indicate", "forward", "attach",
     "upload", "paste", "resend", "spell", "advise", "explain", "repeat", "identify",
     "re-enter", "reenter", "re-send", "resubmit", "re-submit", "reconfirm", "re-confirm",
     "retype", "re-type"}
)  # fmt: skip
# Words that may stand before such a verb without making it anything but a request.
_LEADS = frozenset(
    {"please", "kindly", "just", "also", "first", "then", "so", "and", "but", "now", "simply",
     "quickly", "ok", "okay", "sure", "great", "alright", "meanwhile", "otherwise", "again",
     "if", "possible", "when", "you", "can", "get", "a", "chance"}
)  # fmt: skip
# A question or a statement of what is needed from the person, in its usual shapes:
# "could you", "would you mind", "may I have", "I'll need", "is required", "without the".
_ASKING = re.compile(
    r"\b(?:(?:could|can|would|will|might) (?:you|u)|would you mind|mind (?:giving|sending"
    r"|sharing|telling|confirming|providing|letting|checking)|are you able to|do you (?:have"
    r"|know|remember|happen)|may i (?:have|get|ask|see|know|take|please)|can i (?:have|get"
    r"|ask|take)|(?:i|we)(?:'ll|'d| will| would| do| also| still| just| first| only| will"
    r" also| would also)? (?:need|require)s?(?! to (?!know|have|see|get|confirm|verify))"
    r"|just need(?! to (?!know|have|see|get|confirm|verify))|need (?:your|the|a|an|to (?:know"
    r"|have|see|get))|(?:is|are|'s|'re|will be|would be) (?:needed|required|necessary|missing)"
    r"|without (?:the|your|a|an|that|those|which))\b",
    re.IGNORECASE,
)
_PARTS = re.compile(r"[,;:(]|\s[-–—]+\s")
# A rule stated, not a request: it opens on "never" or "always" (a policy line, quoted or
# leaked), so what it says is needed is needed by the rule, not asked of the person.
_RULE = re.compile(r"^(?:never|always)\b", re.IGNORECASE)
# A request that goes on with a second one: "Please try again and include the method".
_PLEASE_AND = re.compile(r"^(?:please|kindly)\b[^.?!]{0,80}?\band\s+(\w+)", re.IGNORECASE)
# Asking for more of the story rather than for a field.
MORE = re.compile(
    r"\b(?:more (?:details?|information|info|context)|a bit more|what you need|how (?:can|may) "
    r"i help|what (?:can|may) i do|what (?:exactly|specifically)|tell me more|elaborate)\b",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=8192)
def addressed(clause: str) -> bool:
    """The clause asks the person for something: a question, a request opening on a verb of
    giving or telling ("please send", "tell me", "kindly provide"), or a statement of what
    is needed from them ("I'll need your booking reference", "X is required")."""
    text = clause.strip()
    if not text or _PLEASANTRY.match(text.strip(" ?.!,")):
        return False
    if _RULE.match(text):  # "Never book a flight without the traveller's confirmation"
        return False
    if text.endswith("?") or _ASKING.search(text):
        return True
    if (then := _PLEASE_AND.match(text)) and then.group(1).casefold() in REQUEST_VERBS:
        return True
    for part in _PARTS.split(text):
        words = tokens(part)
        while words and words[0] in _LEADS:
            words.pop(0)
        if not words:
            continue
        if words[0] == "let":
            if words[1:3] in (["me", "know"], ["us", "know"]):
                return True
        elif words[0] in REQUEST_VERBS:
            return True
    return False


def own_text(reply: str, asks: Iterable[str]) -> str:
    """The reply without the clauses it copies from the person's turns: the person's own
    question quoted back is not the agent asking anything."""
    heard = [" ".join(tokens(a)) for a in asks]
    kept = []
    for clause in clauses(reply):
        said = " ".join(tokens(clause))
        if len(said.split()) >= 3 and any(said in h for h in heard):
            continue
        kept.append(clause.rstrip(".;"))
    return "; ".join(kept)


def _copied(reply: str, asks: Iterable[str]) -> tuple[list[str], set[int], bool]:
    """(reply tokens, the positions copied from a turn of the person, whether most of one
    turn was copied), read run by run in 4-grams. Each side is looked up in the other's set
    of 4-grams, so a reply that repeats one phrase costs no more than one that does not."""
    said = tokens(reply)
    grams = [tuple(said[i : i + 4]) for i in range(len(said) - 3)]
    mine = set(grams)
    copied: set[int] = set()
    most = False
    for ask in asks:
        words = tokens(ask)
        if len(words) < 4:
            continue
        heard = [tuple(words[i : i + 4]) for i in range(len(words) - 3)]
        theirs = set(heard)
        covered: set[int] = set()
        for i, gram in enumerate(heard):
            if gram in mine:
                covered.update(range(i, i + 4))
        for j, gram in enumerate(grams):
            if gram in theirs:
                copied.update(range(j, j + 4))
        most = most or len(covered) / len(words) >= 0.7
    return said, copied, most


def parrots(reply: str, asks: Iterable[str]) -> bool:
    """Most of one of the person's turns reappears in the reply, run for run."""
    return _copied(reply, asks)[2]


def echoed(reply: str, asks: Iterable[str], objects: frozenset[str]) -> bool:
    """The reply hands the ask back: it repeats it and adds nothing of its own. Flattery,
    framing, filler or rubric words around a copy are nothing of its own; a number, an id,
    or a question that is not the person's is."""
    asks = list(asks)
    if echoes(reply, asks, objects):
        return True
    said, copied, most = _copied(reply, asks)
    if not most:
        return False
    rest = [w for i, w in enumerate(said) if i not in copied]
    if any(ch.isdigit() for w in rest for ch in w):
        return False
    copied_words = {said[i] for i in copied}
    for clause in clauses(reply):
        words = tokens(clause)
        own = [w for w in words if w not in copied_words]
        if clause.rstrip().endswith("?") and len(own) > len(words) / 2:
            return False  # a question of its own
    return True


_FILLER_WORDS = frozenset(
    {"i", "you", "your", "you're", "you'd", "me", "my", "we", "to", "a", "an", "the", "so", "that",
     "would", "like", "want", "wants", "need", "needs", "please", "can", "could", "just", "is",
     "it", "this", "for", "of", "and", "do", "understand", "asking", "asked", "ask", "are",
     "sure", "ok", "okay", "right", "got", "because", "about", "with", "on", "in", "be", "i'd",
     "correct", "let", "confirm", "see", "if"}
)  # fmt: skip


def echoes(reply: str, asks: Iterable[str], objects: frozenset[str]) -> bool:
    """The reply repeats what the person asked and adds nothing of its own (pleasantries
    around it are not its own)."""
    kept = [c for c in clauses(reply) if not _PLEASANTRY.match(c.strip(" ?.!,"))]
    said = [w for w in tokens(" ".join(kept)) if w not in _FILLER_WORDS]
    if not said:
        return False
    for ask in asks:
        heard = set(tokens(ask))
        new = [w for w in said if w not in heard and w not in objects]
        shared = [w for w in said if w in heard]
        if len(shared) >= 2 and len(new) <= max(1, len(said) // 8):
            return True
    return False


_PLEASANTRY = re.compile(
    r"^(?:i'?m (?:so |very |really )?sorry|sorry|i apologi[sz]e|apologies|unfortunately|thanks?"
    r"(?: you)?|hello|hi|hey|of course|sure|certainly|absolutely|no problem|happy to help"
    r"|(?:what an? )?(?:great|good|wonderful|excellent|fantastic|brilliant|lovely|fair) "
    r"(?:question|point)|you(?:'re| are) (?:absolutely |completely |so |totally )?right"
    r"(?: to [\w ]{1,20})?|(?:and )?thank(?:s| you)(?: so much)?|have a (?:good|great|nice) "
    r"\w+|anything else|is there anything else[^.?!]*|how (?:can|may) i help[^.?!]*"
    r"|(?:please )?let me know if (?:there(?:'s| is)|you (?:need|have|want)) anything else[^.?!]*"
    r"|(?:feel free to |don't hesitate to )?(?:reach out|ask) if you (?:need|have) anything[^.?!]*"
    r")[.!,?]?$",
    re.IGNORECASE,
)


# Moves that fit any message whatever it said ("please try again", "resend it later"):
# a clause of only these and function words tells the person nothing about their ask.
_ANY_MESSAGE = frozenset(
    {"please", "kindly", "try", "retry", "again", "later", "resend", "repeat", "rephrase",
     "reword", "restate", "send", "submit", "once", "more", "another", "moment", "wait",
     "shortly", "soon", "bit", "message", "messages"}
)  # fmt: skip


def _any_message(words: list[str]) -> bool:
    return any(w in _ANY_MESSAGE for w in words) and all(
        w in FUNCTION_WORDS or w in _ANY_MESSAGE for w in words
    )


# Words any support reply may use whatever it was asked: greetings, empathy, offers of
# more help, the service talking about itself in general ("I'm working on providing a
# better experience for all customers", "I'm here to help"). A greeting names nothing:
# "Hello! How can I assist you today?" says the same to every question.
_SERVICE_TALK = frozenset(
    {"hear", "glad", "happy", "frustration", "frustrating", "inconvenience", "concern",
     "concerns", "patience", "understanding", "experience", "customers", "customer", "better",
     "best", "working", "work", "providing", "provided", "improve", "improving", "always",
     "ready", "available", "here", "let", "know", "anything", "everything", "else", "other",
     "sure", "okay", "ok", "definitely", "thank", "thanks", "welcome", "pleasure", "feel",
     "free", "reach", "contact", "hesitate", "need", "needs", "want", "like", "today", "great",
     "day", "helpful", "questions", "information", "every", "way", "possible", "give",
     "giving", "offer", "offering", "service", "services", "address", "answer", "respond",
     "hello", "hi", "hey", "greetings", "feedback", "further", "issue", "issues",
     "problem", "problems", "queries", "query", "assistance", "support", "anytime"}
)  # fmt: skip
_FITS_ANY = FUNCTION_WORDS | _ANY_REQUEST | _ANY_MESSAGE | _SERVICE_TALK


def fits_any_message(text: str) -> bool:
    """Every word is one any support reply may use whatever it was asked ("and I'll do my
    best to address it"): the text names nothing of its own."""
    return _fit_any(tokens(text[:4000]))


def _fit_any(words: list[str]) -> bool:
    return bool(words) and all(w in _FITS_ANY or is_negator(w) for w in words)


def talks_past(reply: str, ask: str, told: str = "") -> bool:
    """A reply that shares no word with the question and is made only of what any support
    reply says ("Sure, please let me know if you have any other questions. I'm here to
    help!" to "what are your opening hours?"), or of that and what the agent was `told`
    about itself ("You can ask me to look up an order by its id and return its status"
    to "how long do you take to reply to e-mails?"): it would answer any message alike. A
    short answer in other words ("English" to "which languages?") names something, and
    passes; so does saying the question is outside what it can do ("outside" is no word
    of its instructions)."""
    words = tokens(reply[:4000])
    if not _fit_any(words):
        own = {stem(w) for w in tokens(told[:20000])} if told else set()
        if not own or not _only_told(words, own) or refuses(reply) or speaks_of_knowing(reply):
            return False
        # Its own instructions may be the answer ("Deliveries go out on weekdays only." to
        # "do you deliver on Saturdays?"): any shared word, by the crude stem, lets it be.
        asked5 = {w[:5] for w in tokens(ask[:4000]) if w not in FUNCTION_WORDS}
        return not any(w[:5] in asked5 for w in words if w not in FUNCTION_WORDS)
    asked = {stem(w) for w in tokens(ask[:4000]) if w not in FUNCTION_WORDS}
    return not any(stem(w) in asked for w in words if w not in FUNCTION_WORDS)


# Words of what the speaker knows or holds, not of how things are: "I don't have
# information on that", "not something I know", "I'm not sure", "no access to records".
_KNOWING = frozenset(
    {"information", "info", "details", "access", "idea", "knowledge", "record", "sure",
     "unsure", "know"}
)  # fmt: skip


def speaks_of_knowing(text: str) -> bool:
    """The text speaks of what the speaker knows rather than settling how things are:
    neither a yes/no verdict on the service nor a reply that talks past a question."""
    return bool(_KNOWING & set(tokens(text[:4000])))


def _only_told(words: list[str], own: set[str]) -> bool:
    """At least three words of substance, each either one any reply may use or one of
    the agent's own instructions."""
    content = [w for w in words if w not in FUNCTION_WORDS and not is_negator(w)]
    return len(content) >= 3 and all(w in _FITS_ANY or stem(w) in own for w in content)


def content_free(reply: str) -> bool:
    """Nothing but pleasantries, refusals that name nothing and moves that fit any message
    ("please try again"): no fact, no question, no next step of this ask's own."""
    parts = [c.strip(" .!,") for c in clauses(reply) if c.strip(" .!,")]
    if not parts:
        return True
    refused = any(refuses(p) for p in parts)
    return all(
        _PLEASANTRY.match(p)
        or stock_refusal(p)
        or (refused and all(w in FUNCTION_WORDS or w in _ANY_REQUEST for w in tokens(p)))
        or _any_message(tokens(p))
        for p in parts
    )
