"""One exception root, and the map of every error the toolkit raises on purpose.

The library never prints or exits; it raises one of these with what the message needs,
and the CLI turns any of them into one line on stderr and exit 1. Two kinds matter to a
caller: an error that stops the stage (everything but `Failure`), and a `Failure`, which
loses one item (a rollout, a verdict, a model call, an exported row) that the stage counts
and reports while it goes on. A stage must never let a `Failure` stop it, and never
swallow anything else.

    WhileaiError                  the root
    ├── BadRowError               a line that is not a usable row (.source, .line, .problem)
    ├── SpecError                 a spec that cannot drive a run (.source, .problem)
    ├── NoRows                    the rows given held none: nothing to do (the CLI exits 3)
    ├── ConfigError               a flag, variable or plug-in reference that does not resolve
    │   └── UnreadableCache       the model-call cache file is not a database
    ├── PublishGateError          rl rows a grouped update cannot learn from (.report)
    │                             (defined with its report, in select/gate.py)
    ├── HackScanRefusal           push --strict-hacks and a reward the hack scan calls a
    │                             reward hack (.scan; defined in platform/push.py)
    ├── TrainingFailed            a `whileai train` run failed; it is on the store as
    │                             `failed` with the error (.run_id; defined in train/run.py)
    ├── ModelStopped              a model endpoint stopped the run
    │   ├── AllowanceExhausted    429 for good, or the quota is spent (.endpoint, .reason)
    │   ├── EndpointRefused       401/403/404: wrong for every call (.endpoint, .status)
    │   └── WriterError           no opener could be written, so no rollout can start
    ├── StoreError                a store refused a request (.status: the HTTP status)
    │   ├── BadRequest 400        (the server's SignupError and DeviceError subclass it, and
    │   │                         serve-model's BadChatRequest, in train/serve.py)
    │   ├── Unauthorized 401, Forbidden 403, NotFound 404, Conflict 409, Gone 410
    │   ├── TooSlow 408           a request body that stalled or trickled (.limit)
    │   ├── TooLarge 413          over a named limit (.limit)
    │   └── TooManyRequests 429   over a rate limit or daily quota (.retry_after, .limit)
    └── Failure                   one item failed; counted, the stage goes on
        ├── AgentError            a rollout is lost: the agent raised or answered the wrong shape
        ├── PersonDropped         a rollout is lost: the simulated person broke role on every
        │                         redraw of one turn (.reason)
        ├── ModelCallError        one model call failed after its retries (.kind, .status)
        ├── TransportError        one HTTP attempt of a model call broke before a whole
        │                         response (.kind); the client retries it, then raises
        │                         ModelCallError (defined in models/transport.py)
        ├── JudgeFailure          one verdict could not be had
        │   ├── JudgeTimeout      a judge ran past its deadline (--timeout)
        │   ├── InvalidVerdict    a reply that cannot be read as a verdict
        │   ├── JudgeFailed       a status another judge earned (.status), passed on
        │   ├── NoGold            the row carries nothing to compare against
        │   └── Undecided         the judge cannot tell what the row called for
        ├── SourceCopy            an aimed run's opener keeps near-copying a source trace:
        │                         that ask is dropped (defined in simulate/openers.py)
        ├── SandboxUnavailable    code-exec cannot start its sandbox on this machine
        └── Refused               an export will not write one row (.reason: how it counts)

Code that runs inside the code-exec sandbox (`judges/codeexec/wire.py`, `runner.py`) has
its own plain exceptions: it sees only the standard library.
"""

from __future__ import annotations


class WhileaiError(Exception):
    """Root of every error the toolkit raises on purpose (bad input, bad config, failed run)."""


class BadRowError(WhileaiError):
    """A line of a JSONL stream that is not a usable row; carries where it was."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        super().__init__(f"{source}:{line}: {problem}")


class SpecError(WhileaiError):
    """A spec (tools + policy) that cannot drive a run."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


class NoRows(WhileaiError):
    """An input a stage needs rows from held none (an empty file, only blank lines, an
    empty pipe), so there is nothing to do. Not bad input: the CLI exits 3, not 1, so a
    cron chain stops before the next stage and can tell an empty day from a failure.
    Lines refused as bad are not this: those are `BadRowError`."""


class ConfigError(WhileaiError):
    """A flag, environment variable or plug-in reference that does not resolve."""


class UnreadableCache(ConfigError):
    """The cache file is not a SQLite database (truncated, overwritten)."""


# -- a model endpoint stopped the run ---------------------------------------------------


class ModelStopped(WhileaiError):
    """The model behind the run will not answer any further call: stop and say why."""


class AllowanceExhausted(ModelStopped):
    """The endpoint keeps refusing with 429: the run stops and says why."""

    def __init__(self, endpoint: str, reason: str) -> None:
        self.endpoint = endpoint
        self.reason = reason
        super().__init__(f"model endpoint {endpoint} refused: {reason}")


class EndpointRefused(ModelStopped):
    """401/403/404: the key, the permission or the model name is wrong for every call."""

    def __init__(self, endpoint: str, status: int, reason: str) -> None:
        self.endpoint = endpoint
        self.status = status
        self.reason = reason
        super().__init__(f"model endpoint {endpoint} refused with HTTP {status}: {reason}")


class WriterError(ModelStopped):
    """The writer could not produce an opener even after the client's retries: without
    openers there are no rollouts, so the run stops and says why."""


# -- the store refused ------------------------------------------------------------------


class StoreError(WhileaiError):
    """A store refused a request; `status` is the HTTP status the server answers with."""

    status = 400


class BadRequest(StoreError):
    status = 400


class Unauthorized(StoreError):
    status = 401


class NotFound(StoreError):
    status = 404


class Conflict(StoreError):
    status = 409


class Gone(StoreError):
    """An expired upload/download link or device code."""

    status = 410


class Forbidden(StoreError):
    """A refusal that no key would change: a bad link signature, a form from another site,
    signups closed."""

    status = 403


class TooSlow(StoreError):
    """A request body that stopped arriving, or arrived slower than the server's minimum
    rate: the server stops waiting for it, so a client that trickles cannot hold a worker.
    `limit` names which rule ended it (`body_idle_timeout` or `body_min_rate`)."""

    status = 408

    def __init__(self, message: str, limit: str = "") -> None:
        super().__init__(message)
        self.limit = limit


class TooLarge(StoreError):
    """A request over one of the server's named limits (`Limits`): refused whole, nothing
    of it stored. `limit` is the limit's name, as the flag and the error spell it."""

    status = 413

    def __init__(self, message: str, limit: str = "") -> None:
        super().__init__(message)
        self.limit = limit


class TooManyRequests(StoreError):
    """A client over a rate limit or a daily quota; `retry_after` is how many seconds until
    it may try again, `limit` the quota's name when one refused it."""

    status = 429

    def __init__(self, message: str, retry_after: float = 0.0, limit: str = "") -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.limit = limit


# -- one item failed; the stage counts it and goes on -----------------------------------


class Failure(WhileaiError):
    """One item (a rollout, a verdict, a call, an exported row) is lost; never a run stop."""


class AgentError(Failure):
    """The agent raised or returned the wrong shape: the rollout is dropped and counted."""


class PersonDropped(Failure):
    """The simulated person could not be kept a person: every draw of one of their turns
    (the opener included) failed the voice check, so the rollout is dropped and counted,
    never kept. `reason` is the last check it failed (`role_flip`, `writer_text`, ...)."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(message)


class ModelCallError(Failure):
    """One model call failed for good (after retries). `kind` names how, for counting."""

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        self.kind = kind
        self.status = status
        super().__init__(message)


class JudgeFailure(Failure):
    """One verdict could not be had: the row is marked with a status, never scored 0."""


class JudgeTimeout(JudgeFailure):
    """Raised by a judge that enforces its own deadline (a co-process, a sandbox), or by a
    built-in judge that finds the row's --timeout spent between two of its steps."""


class InvalidVerdict(JudgeFailure):
    """Raised by a judge whose wire reply could not be read as a verdict at all."""


class JudgeFailed(JudgeFailure):
    """Raised to pass on a status another judge earned (a part of a composite judge)."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status


class NoGold(JudgeFailure):
    """The row carries nothing to compare against; grading it would invent a 0."""


class Undecided(JudgeFailure):
    """The judge cannot tell what the row called for (whether the ask needed an action, a
    reply too long to read): a pass would be a guess and so would a 0, so the row is
    marked `undecided` and left out of every rate."""


class SandboxUnavailable(Failure):
    """The code-exec sandbox cannot be started here; nothing of the candidate ran."""


class Refused(Failure):
    """A row this export will not write; `reason` is the key it is counted under."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)
