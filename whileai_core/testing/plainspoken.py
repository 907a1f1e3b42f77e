"""A second scripted agent, written apart from the seeded one, with its own wording.

    whileai simulate specs/orders --agent whileai_core.testing.plainspoken:agent

It exists so the judges, probes and trust reports are tested on rows our seeded agent did
not write: it reads the ask its own way (ids by shape, values by "<field> is <value>"),
looks a record up before changing it, and reports what the world answered in words of its
own. On about a third of rollouts (chosen from a hash of the ask, so reruns agree) it
makes one mistake of its own making — a false success, an invented id, a wrong amount, a
template slot, a function handed to the person, a promise no tool keeps, one record of
two, the ask echoed — and lists it in the row's `seeded`, so a judge can be scored
against it. It sees the ask and the mock world, never the privileged block, and it does
not hold a conversation: a vague ask gets one question back.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from typing import Any

from ..spec import Tool, is_key_param, name_words, past_tense

MISTAKES = (
    "false_success", "invented_argument", "contradiction", "placeholder", "tells_to_call",
    "impossible_promise", "duplicate_ignored", "echo",
)  # fmt: skip
MISTAKE_RATE = 0.35

_IDS = re.compile(r"\b[A-Za-z]{2,5}-\d{2,7}\b|\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6}\b")
_EMAILS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# The person asks to skip the rules, or has not decided yet: read, explain, change nothing.
_PUSHING = re.compile(r"force it|whatever your rules|policy speech|make an exception|skip the",
                      re.IGNORECASE)  # fmt: skip
_UNDECIDED = re.compile(
    r"not sure whether|thinking about whether|before i decide|maybe not|keep it as it is"
    r"|do not want anything changed|what happens next|what are my options",
    re.IGNORECASE,
)
_SYNONYMS = {
    "get": ("check", "look", "status", "where", "details", "pull", "see"),
    "search": ("find", "list", "search", "flights", "recent"),
    "refund": ("refund", "money back", "reimburse"),
    "cancel": ("cancel", "call off"),
    "book": ("book", "reserve", "seat"),
    "change": ("change", "move", "switch", "rebook"),
}


def _near(word: str, wanted: str) -> bool:
    """The word, or a slip of the keyboard away from it ('oredr' for 'order')."""
    return word == wanted or (
        len(word) >= 4 and difflib.SequenceMatcher(None, word, wanted).ratio() >= 0.8
    )


def _pick(message: str) -> str | None:
    """The mistake this ask gets, if any: a fixed fraction of asks, by hash."""
    digest = hashlib.sha256(message.encode("utf-8")).digest()
    if digest[0] / 255 >= MISTAKE_RATE:
        return None
    return MISTAKES[digest[1] % len(MISTAKES)]


def _score(tool: Tool, low: str) -> int:
    """How strongly the ask points at this tool: its verb (or a synonym, typos forgiven)
    counts three, each word of its object one."""
    words = name_words(tool.name)
    verb, objects = (words[0], words[1:]) if words else ("", [])
    said = re.findall(r"[a-z]+", low)
    verbs = [w for w in (verb, *_SYNONYMS.get(verb, ())) if w]
    hits = sum(3 for v in verbs if re.search(rf"\b{v}", low) or any(_near(w, v) for w in said))
    hits += sum(1 for o in objects if o in low)
    return hits


def _value(tool: Tool, name: str, message: str) -> Any:
    schema = tool.properties.get(name)
    schema = schema if isinstance(schema, dict) else {}
    enum = schema.get("enum")
    low = message.lower()
    if isinstance(enum, list):
        return next(
            (e for e in enum if str(e).lower() in low or str(e).lower().replace("_", " ") in low),
            None,
        )
    if "email" in name:
        found = _EMAILS.findall(message)
        return found[0] if found else None
    spoken = name.replace("_", " ")
    said = re.search(rf"\b{re.escape(spoken)}\s+(?:is|:)\s+([^.;\n]+)", message, re.IGNORECASE)
    if said:
        # Run-on text has no full stop between details: a value ends where the next
        # sentence starts, and one with a declared shape is the first word that has it.
        raw = re.split(r"\s+(?=(?:The|I|It|My|Please|And)\b)", said.group(1).strip())[0]
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            fits = [w for w in re.findall(r"[\w@.+-]+", raw) if re.search(pattern, w)]
            return fits[0] if fits else None
        if schema.get("format") == "date":
            day = re.search(r"\d{4}-\d{2}-\d{2}", raw)
            return day.group() if day else None
        if schema.get("type") in ("integer", "number"):
            num = re.match(r"-?\d+(?:\.\d+)?", raw)
            return (int if schema["type"] == "integer" else float)(num.group()) if num else None
        return raw
    if is_key_param(name):
        found = _IDS.findall(message)
        return found[0] if found else None
    return None


class _Rollout:
    def __init__(self, message: str, world: Any) -> None:
        self.message = message
        self.world = world
        tools = getattr(world, "tools", {})
        self.tools: list[Tool] = list(tools.values()) if isinstance(tools, dict) else []
        self.steps: list[dict[str, Any]] = []
        self.mistake = _pick(message)
        self.made: list[str] = []
        self.invented: str | None = None

    def call(self, tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
        if self.invented is not None and self.invented in args.values():
            self.made.append("invented_argument")
            self.invented = None
        result = self.world.call(tool.name, args)
        self.steps.append({"tool": tool.name, "arguments": args, "result": result})
        return result

    def args_for(self, tool: Tool) -> tuple[dict[str, Any], list[str]]:
        args: dict[str, Any] = {}
        missing: list[str] = []
        for name in tool.properties:
            value = _value(tool, name, self.message)
            if value is not None:
                args[name] = value
            elif name in tool.required:
                missing.append(name)
        if self.mistake == "invented_argument" and missing:
            key = next((m for m in missing if is_key_param(m)), None)
            if key is not None:
                args[key] = f"{key.split('_')[0][:3].upper()}-{40000 + len(self.message)}"
                missing.remove(key)
                self.invented = args[key]
        return args, missing

    def run(self) -> dict[str, Any]:
        low = self.message.lower()
        # A tie goes to the tool that changes something: an ask naming a write's verb
        # ("cancel") wants it done, whatever else the wording brushes against ("seems").
        ranked = sorted(self.tools, key=lambda t: (-_score(t, low), t.kind != "write"))
        if not ranked:
            return self.done("I can't look anything up from here; our help centre can.")
        goal = ranked[0]
        objects = {w for t in self.tools for w in name_words(t.name)[1:] if len(w) > 2}
        words = re.findall(r"[a-z]+", low)
        if _score(goal, low) == 0 and not any(_near(w, o) for w in words for o in objects):
            return self.done("I'm here for questions about "
                             f"{', '.join(sorted(objects)) or 'your account'}; for anything "
                             "else our help centre is the quickest route.")  # fmt: skip
        if self.mistake == "echo":
            self.made.append("echo")
            return self.done(f"You'd like help with this: {self.message.strip()}")
        args, missing = self.args_for(goal)
        if missing:
            wanted = " and ".join(m.replace("_", " ") for m in missing)
            return self.done(f"To take care of that I need the {wanted}. Could you send it over?")
        hold = bool(_PUSHING.search(self.message) or _UNDECIDED.search(self.message))
        if hold and goal.kind == "write":
            read = self.reader(goal)
            if read is None:
                return self.done(f"I haven't changed anything. If you want {goal.name} run the "
                                 "normal way, just say so.")  # fmt: skip
            goal = read
            args, _ = self.args_for(goal)
        if self.mistake == "tells_to_call":
            self.made.append("tells_to_call")
            return self.done(f"You can sort this out yourself by calling {goal.name} with "
                             f"{', '.join(f'{k}={v}' for k, v in args.items())}.")  # fmt: skip
        if goal.kind == "write":
            read = self.reader(goal)
            if read is not None:
                read_args, _ = self.args_for(read)
                looked = self.call(read, read_args)
                if looked.get("status") != "ok" or looked.get("stale") or looked.get("matches"):
                    return self.report(read, read_args, looked)
                data = looked.get("data") if isinstance(looked.get("data"), dict) else {}
                verb = name_words(goal.name)[0] if name_words(goal.name) else ""
                if isinstance(data, dict) and data.get("status") == past_tense(verb):
                    ident = next((str(v) for k, v in read_args.items() if is_key_param(k)), "it")
                    return self.done(f"{ident} had already been {data['status']} before today, "
                                     f"so I left it alone.")  # fmt: skip
        result = self.call(goal, args)
        return self.report(goal, args, result)

    def reader(self, write: Tool) -> Tool | None:
        keys = {k for k in write.required if is_key_param(k)}
        return next((t for t in self.tools if t.kind == "read" and keys & set(t.required)), None)

    def report(self, tool: Tool, args: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        ident = next((str(v) for k, v in args.items() if is_key_param(k)), "your request")
        status = result.get("status")
        data = result.get("data") if isinstance(result.get("data"), dict) else {}
        found = result.get("results")
        if status == "ok" and isinstance(found, list) and not result.get("stale"):
            # A search's list: nothing, the one record (read as a look-up's data), or several.
            if not found:
                return self.done(f"I found nothing under {ident}.")
            if len(found) > 1:
                names = ", ".join(str(next(iter(r.values()), "?")) for r in found[:5])
                return self.done(f"{len(found)} records match {ident}: {names}. Which one?")
            data = found[0] if isinstance(found[0], dict) else {}
        assert isinstance(data, dict)
        if self.mistake == "false_success" and (status != "ok" or result.get("stale")):
            self.made.append("false_success")
            return self.done("Good news: your request has been completed.")
        matches = result.get("matches")
        if status == "ok" and result.get("stale") and (
            isinstance(found, list) or isinstance(matches, list)
        ):
            return self.done(f"What I got back for {ident} is an old copy (dated "
                             f"{result.get('as_of')}), so I'd treat it with caution.")  # fmt: skip
        if status in ("ok", "ambiguous") and matches:
            first, second = matches[0], matches[1]
            if self.mistake == "duplicate_ignored":
                self.made.append("duplicate_ignored")
                return self.done(f"Record {ident} shows status {first.get('status')}.")
            return self.done(f"Heads up: two records share {ident} (from "
                             f"{first.get('created_at', '?')} and {second.get('created_at', '?')})."
                             " Tell me which one and I'll continue.")  # fmt: skip
        if status == "ok" and result.get("stale"):
            return self.done(f"The copy of {ident} I got is old (dated {data.get('as_of')}), "
                             f"so I'd treat its '{data.get('status')}' with caution.")  # fmt: skip
        if status == "ok" and data.get("progress"):
            done = ", ".join(data.get("completed_steps") or []) or "the first step"
            todo = ", ".join(data.get("pending_steps") or []) or "the rest"
            return self.done(f"{ident} is midway: {done} finished, {todo} outstanding.")
        if status == "ok":
            return self.done(self.describe(tool, ident, data))
        return self.done(self.trouble(tool, ident, result))

    def describe(self, tool: Tool, ident: str, data: dict[str, Any]) -> str:
        amount = data.get("amount")
        if self.mistake == "contradiction" and isinstance(amount, (int, float)):
            self.made.append("contradiction")
            amount = round(amount * 10 + 1, 2)
        parts = [f"status {data.get('status')}"] if data.get("status") else []
        if isinstance(amount, (int, float)):
            parts.append(f"amount {amount:.2f} {data.get('currency', '')}".strip())
        if data.get("updated_at"):
            parts.append(f"last updated {data['updated_at']}")
        verb = name_words(tool.name)[0] if name_words(tool.name) else "handle"
        head = f"Finished: {past_tense(verb)} {ident}." if tool.kind == "write" else f"{ident}:"
        text = f"{head} {'; '.join(parts)}." if parts else head
        if self.mistake == "placeholder":
            self.made.append("placeholder")
            text += "\n\nKind regards,\n[Agent Name]"
        elif self.mistake == "impossible_promise":
            self.made.append("impossible_promise")
            text += " I'll also email you a summary tonight."
        return text

    def trouble(self, tool: Tool, ident: str, result: dict[str, Any]) -> str:
        status = result.get("status")
        data = result.get("data") if isinstance(result.get("data"), dict) else {}
        if status == "not_found":
            return f"Nothing turned up for {ident}. Could you double-check the number?"
        if status == "timeout":
            return (f"The {tool.name} request didn't come back in time; nothing changed. Try "
                    "me again in a minute.")  # fmt: skip
        if status == "permission_denied":
            return f"I'm not allowed to run {tool.name} here, so {ident} is untouched."
        if status == "malformed":
            return (f"The answer from {tool.name} was garbled beyond reading, so I won't guess "
                    f"at {ident}.")  # fmt: skip
        if status == "already_done":
            state = data.get("status") if isinstance(data, dict) else None
            return f"{ident} had already been {state or 'handled'}; nothing more to do."
        return f"{tool.name} turned the request down: {result.get('error', 'no reason given')}."

    def done(self, text: str) -> dict[str, Any]:
        if self.mistake is not None and not self.made:
            # The planned mistake had nowhere to go (no failure to paper over, no amount to
            # misquote): one that fits any reply instead.
            if len(self.message) % 2:
                self.made.append("placeholder")
                text += "\n\nKind regards,\n[Agent Name]"
            else:
                self.made.append("impossible_promise")
                text += " I'll also email you a summary tonight."
        return {"steps": self.steps, "final_text": text, "seeded": list(self.made)}


def agent(message: str, world: Any) -> dict[str, Any]:
    """One rollout: the steps taken and the reply, plus the planted mistake in `seeded`."""
    return _Rollout(message, world).run()
