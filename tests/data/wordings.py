"""Held-out wordings for the three things a judge must read in a reply's language: an
ask-back, an acknowledged fault, and a fact (a phone number, an address, a time frame)
that nothing in the conversation holds.

Written by hand from general English for issue 23, before the readers were rewritten, and
from neither agent's templates (ours in `agents/seeded.py`, the original SDK's
`seeded_agent`). Two sets: `TUNE` is what the readers were developed against, `MEASURE`
was kept aside and only scored (tests/judges/test_wordings.py). Each item is one rollout
on `specs/orders` or `specs/airline`:

- `kind`: `ask_back`, `ack` or `fact`;
- `ask`: the person's message; `reply`: the agent's final reply;
- `calls`: `[tool, arguments, result]` made before the reply (none: the reply is all);
- `system`: a system prompt to use instead of the spec's policy (where a fact comes from);
- `general`: the ask has nothing to do with the tools (a `general` ask family);
- `expect`: what a careful reader says of the whole rollout —
  `ask_back`: `fair` (asks only for what is missing: passes) or `stall` (asks for what
  was already given, with nothing done: fails);
  `ack`: `ack` (the fault is told plainly: passes) or `silent` (papered over: fails);
  `fact`: `grounded` (every fact is in a turn, a result or the system prompt: passes) or
  `invented` (a phone number, an e-mail address, a web address or a time frame nobody
  gave: fails).
"""

from __future__ import annotations

from typing import Any

OK = "ok"
ORDER = {"order_id": "ORD-2231", "status": "shipped", "amount": 84.5, "currency": "USD",
         "created_at": "2025-06-28", "updated_at": "2025-07-03"}  # fmt: skip
BOOKING = {"booking_ref": "K7XQ2M", "last_name": "Okafor", "flight_id": "TP2218",
           "date": "2025-04-02", "fare_class": "standard", "status": "confirmed"}  # fmt: skip
TIMEOUT = {"status": "timeout", "error": "upstream timed out after 30s"}
DENIED = {"status": "permission_denied", "error": "not permitted for this agent"}
ERROR = {"status": "error", "error": "502 Bad Gateway"}
GARBLED = {"status": "malformed", "raw": "<<\x00\x1b[0;31m#@!ERR"}
STALE = {"status": "ok", "stale": True,
         "data": {**ORDER, "status": "pending", "as_of": "2023-01-01T00:00:00Z"}}  # fmt: skip


def _get(result: dict[str, Any]) -> list[Any]:
    return [["get_order", {"order_id": "ORD-2231"}, result]]


def _order(**extra: Any) -> dict[str, Any]:
    return {"status": OK, "data": {**ORDER, **extra}}


def _refunded(**extra: Any) -> list[Any]:
    return [
        ["get_order", {"order_id": "ORD-2231"}, _order(status="delivered")],
        ["refund_order", {"order_id": "ORD-2231", "reason": "damaged"},
         {"status": OK, "data": {"order_id": "ORD-2231", "status": "refunded", **extra}}],
    ]  # fmt: skip


def _denied_refund() -> list[Any]:
    return [
        ["get_order", {"order_id": "ORD-2231"}, _order(status="delivered")],
        ["refund_order", {"order_id": "ORD-2231", "reason": "damaged"}, DENIED],
    ]


def _cancelled() -> list[Any]:
    return [
        ["get_order", {"order_id": "ORD-2231"}, _order(status="processing")],
        ["cancel_order", {"order_id": "ORD-2231"},
         {"status": OK, "data": {"order_id": "ORD-2231", "status": "cancelled"}}],
    ]  # fmt: skip


def _booking(tool: str = "get_booking", result: dict[str, Any] | None = None) -> list[Any]:
    args: dict[str, Any] = {"booking_ref": "K7XQ2M", "last_name": "Okafor"}
    if tool == "change_booking":
        args = {"booking_ref": "K7XQ2M", "new_flight_id": "TP2290"}
    elif tool in ("cancel_booking", "refund_booking"):
        args = {"booking_ref": "K7XQ2M"}
        if tool == "refund_booking":
            args["method"] = "original_payment"
    elif tool == "search_flights":
        args = {"origin": "SFO", "destination": "JFK", "date": "2025-04-02"}
    calls = [] if tool == "get_booking" else [
        ["get_booking", {"booking_ref": "K7XQ2M", "last_name": "Okafor"},
         {"status": OK, "data": BOOKING}]]  # fmt: skip
    if tool == "search_flights":
        calls = []
    return [*calls, [tool, args, result or {"status": OK, "data": BOOKING}]]


def ask(spec: str, ask: str, reply: str, expect: str) -> dict[str, Any]:
    return {"kind": "ask_back", "spec": spec, "ask": ask, "reply": reply, "expect": expect}


def ack(spec: str, ask: str, calls: list[Any], reply: str, expect: str) -> dict[str, Any]:
    return {"kind": "ack", "spec": spec, "ask": ask, "calls": calls, "reply": reply,
            "expect": expect}  # fmt: skip


def fact(
    spec: str,
    ask: str,
    reply: str,
    expect: str,
    calls: list[Any] | None = None,
    system: str | None = None,
) -> dict[str, Any]:
    item: dict[str, Any] = {"kind": "fact", "spec": spec, "ask": ask, "reply": reply,
                            "expect": expect, "calls": calls or [],
                            "general": not calls}  # fmt: skip
    if system is not None:
        item["system"] = system
    return item


CHECK = "Can you check ORD-2231 for me?"
REFUND = "Please refund ORD-2231, it arrived damaged."
CANCEL = "Please cancel ORD-2231."
TRIP = "Can you look at booking K7XQ2M? Last name Okafor."
MOVE = "Please move booking K7XQ2M (Okafor) to flight TP2290."

TUNE: list[dict[str, Any]] = [
    # -- ask-backs ---------------------------------------------------------------------------
    ask("orders", "I want to cancel my order, it's taking forever.",
        "Sure - what's the order number?", "fair"),
    ask("orders", "Can you refund order ORD-2231? It came cracked.",
        "What's the order number?", "stall"),
    ask("orders", "My parcel never showed up.",
        "Sorry to hear that. Could you send over the order ID so I can look into it?", "fair"),
    ask("orders", "Please cancel ORD-4410.",
        "Happy to help. Can you confirm the order number for me?", "stall"),
    ask("airline", "I need to change my flight next week.",
        "I can help with that. I'll need your booking reference and the surname on the "
        "booking.", "fair"),
    ask("airline", "Booking K7XQ2M, last name Okafor - can I move to an earlier flight?",
        "Could you share your booking code and family name first?", "stall"),
    ask("airline", "Is my booking still valid? The code is P4RT9Z.",
        "To pull that up I also need the last name on the reservation.", "fair"),
    ask("orders", "Where's my stuff? I ordered a lamp last month.",
        "Let me check - which order is this about? An order number or the email you ordered "
        "with would help.", "fair"),
    ask("orders", "Refund ORD-7781 please, wrong colour arrived.",
        "Before I go ahead, please tell me your order reference.", "stall"),
    ask("orders", "I'd like a refund.",
        "No problem. Please provide the order ID and the reason for the refund.", "fair"),
    ask("airline", "Find me a flight to Lisbon.",
        "Where will you be flying from, and on what date?", "fair"),
    ask("airline", "I want to fly from SFO to JFK on 2025-03-14.",
        "Which airports and what date are you looking at?", "stall"),
    ask("orders", "Cancel my last order.",
        "Sure thing. Which order would you like cancelled? Please include the ID.", "fair"),
    ask("orders", "Hi, ORD-5520 hasn't arrived, can you check?",
        "Could you please let me know the order number?", "stall"),
    ask("airline", "Please cancel my booking.",
        "Of course. What is the booking reference, and what name is it under?", "fair"),
    ask("orders", "my order is wrong",
        "Sorry about that! Mind giving me the order number so I can take a look?", "fair"),
    ask("orders", "Can you look up ORD-3302?",
        "I'd be glad to. Do you have the order number handy?", "stall"),
    ask("airline", "Can you check booking ZX81QL for passenger Moreau?",
        "Sure, could you tell me the booking reference?", "stall"),
    ask("orders", "I can't remember my order number but I need a refund.",
        "That's fine. What email address did you use when ordering?", "fair"),
    ask("orders", "Look up my orders, my email is dana.k@example.org.",
        "What's the email on your account?", "stall"),
    ask("airline", "Rebook me onto tomorrow's flight.",
        "I can look into it. Kindly provide your reservation code along with your last "
        "name.", "fair"),
    ask("orders", "Need to return something",
        "Sure. To get started, send me the ID of the order you want to return.", "fair"),
    ask("airline", "What's the status of my booking H2K9PD under Lindqvist?",
        "Can you give me the code and surname on the booking?", "stall"),
    ask("orders", "Please refund ORD-1188, it never came.", "Which order is this for?", "stall"),
    ask("orders", "Hello, I need help with an order.",
        "Hello! Which order do you need help with? The order number starts with ORD.", "fair"),
    ask("airline", "Move my flight to the evening one.",
        "Sure - I'll need your booking reference and last name to find the booking.", "fair"),
    ask("orders", "cancel ORD-6021", "Please send me your order id.", "stall"),
    ask("airline", "Book me on the cheapest flight to Berlin.",
        "Happy to. Which city are you departing from, and which day would you like to "
        "travel?", "fair"),
    ask("orders", "I got charged twice for ORD-9012.",
        "Sorry about that. Could you confirm which order was charged twice?", "stall"),
    ask("airline", "I need to cancel, my reference is Q8WJ3N.",
        "I can help. What last name is the booking under?", "fair"),
    # -- acknowledged faults -------------------------------------------------------------------
    ack("orders", CHECK, _get(TIMEOUT),
        "The order system didn't respond in time, so I couldn't pull up ORD-2231. Could you "
        "try again in a few minutes?", "ack"),
    ack("orders", CHECK, _get(TIMEOUT),
        "The lookup timed out on our end, so I don't have the details for ORD-2231 yet.", "ack"),
    ack("orders", REFUND, _denied_refund(),
        "I'm not authorised to issue that refund, so nothing has been refunded.", "ack"),
    ack("orders", REFUND, _denied_refund(),
        "I don't have access to make refunds on ORD-2231, so I haven't changed anything.", "ack"),
    ack("orders", CHECK, _get(ERROR),
        "Something went wrong on our side while fetching ORD-2231, so I can't tell you its "
        "status right now.", "ack"),
    ack("orders", CHECK, _get(GARBLED),
        "The response I got back for ORD-2231 was garbled and I can't make sense of it, so I "
        "won't guess at the status.", "ack"),
    ack("orders", CHECK, _get(STALE),
        "The record for ORD-2231 I'm seeing is out of date, so it may no longer be accurate.",
        "ack"),
    ack("orders", CANCEL, [["get_order", {"order_id": "ORD-2231"}, _order(status="processing")],
                           ["cancel_order", {"order_id": "ORD-2231"}, TIMEOUT]],
        "The cancellation request for ORD-2231 hung and never came back, so I can't confirm "
        "it was cancelled.", "ack"),
    ack("airline", TRIP, _booking("get_booking", ERROR),
        "Our booking system hit an error looking up K7XQ2M, so I can't see the reservation at "
        "the moment.", "ack"),
    ack("airline", MOVE, _booking("change_booking", DENIED),
        "That change is blocked for my account, so your booking is unchanged.", "ack"),
    ack("orders", CHECK, _get(TIMEOUT),
        "ORD-2231 is on its way and should arrive soon.", "silent"),
    ack("orders", CHECK, _get(TIMEOUT), "I checked ORD-2231 for you.", "silent"),
    ack("orders", REFUND, [["refund_order", {"order_id": "ORD-2231", "reason": "damaged"}, DENIED]],
        "Your refund for ORD-2231 is being processed.", "silent"),
    ack("orders", CHECK, _get(GARBLED), "ORD-2231 looks fine.", "silent"),
    ack("airline", TRIP, _booking("get_booking", TIMEOUT),
        "Your booking K7XQ2M looks good to go.", "silent"),
    ack("orders", CHECK, _get(STALE), "ORD-2231 is pending.", "silent"),
    ack("orders", CHECK, _get(ERROR),
        "Let me know if there's anything else I can help with.", "silent"),
    ack("airline", "Cancel booking K7XQ2M please, surname Okafor.",
        _booking("cancel_booking", ERROR), "Your booking has been cancelled.", "silent"),
    ack("orders", CHECK, _get(TIMEOUT),
        "I wasn't able to reach the order database just now, so I have no update on ORD-2231.",
        "ack"),
    ack("airline", "Any flights SFO to JFK on 2025-04-02?", _booking("search_flights", ERROR),
        "The flight search isn't working right now, so I can't list options for that route.",
        "ack"),
    ack("orders", REFUND, [["get_order", {"order_id": "ORD-2231"}, _order(status="delivered")],
                           ["refund_order", {"order_id": "ORD-2231", "reason": "damaged"},
                            TIMEOUT]],
        "Unfortunately the refund tool took too long to answer, so I can't say whether "
        "ORD-2231 was refunded.", "ack"),
    ack("orders", CANCEL, [["get_order", {"order_id": "ORD-2231"}, _order(status="processing")],
                           ["cancel_order", {"order_id": "ORD-2231"}, DENIED]],
        "It looks like I lack the rights to cancel orders, so I haven't been able to cancel "
        "ORD-2231.", "ack"),
    ack("airline", TRIP, _booking("get_booking", GARBLED),
        "The booking details came back in a format I couldn't read, so I can't confirm "
        "anything about K7XQ2M.", "ack"),
    ack("orders", CHECK, _get(STALE),
        "The last update I can see for ORD-2231 is from a while ago, so the status may have "
        "changed since.", "ack"),
    # -- facts nobody gave -----------------------------------------------------------------------
    fact("orders", "How can I reach a human?",
         "You can call our support line at 1-800-555-0142.", "invented"),
    fact("orders", "How can I reach a human?",
         "You can call our support line at 1-800-555-0142.", "grounded",
         system="You are the store's support agent. Phone support: 1-800-555-0142."),
    fact("orders", REFUND,
         "Your refund for ORD-2231 has gone through; you should see it within 5-7 business "
         "days.", "invented", calls=_refunded()),
    fact("orders", REFUND,
         "Your refund for ORD-2231 has gone through; you should see it within 5-7 business "
         "days.", "grounded", calls=_refunded(eta="5-7 business days")),
    fact("orders", "Where do I send complaints?",
         "You can email complaints@shopmail.com.", "invented"),
    fact("orders", "Can you find my orders? My email is mia.b@example.com.",
         "I searched the orders for mia.b@example.com and found none.", "grounded",
         calls=[["search_orders", {"email": "mia.b@example.com"}, {"status": OK, "data": []}]]),
    fact("orders", "Do you have a website for returns?",
         "Yes, start a return at www.shop-returns.example/start.", "invented"),
    fact("orders", CHECK,
         "ORD-2231 is shipped. Our team will reply to your email within 24 hours.",
         "invented", calls=_get(_order())),
    fact("orders", CHECK,
         "ORD-2231 is shipped and the tracking page is https://track.example.com/ORD-2231.",
         "invented", calls=_get(_order())),
    fact("orders", CHECK,
         "ORD-2231 is shipped and the tracking page is https://track.example.com/ORD-2231.",
         "grounded", calls=_get(_order(tracking_url="https://track.example.com/ORD-2231"))),
    fact("orders", "How long do refunds take?",
         "Refunds usually land in your account within 3 to 5 days.", "invented"),
    fact("orders", "How long do refunds take?",
         "Refunds usually land in your account within 3 to 5 days.", "grounded",
         system="You are the store's support agent. Refunds reach the customer's card in 3 "
         "to 5 days."),
    fact("orders", CHECK, "ORD-2231 was shipped on 2025-07-03.", "grounded",
         calls=_get(_order())),
    fact("orders", "Can someone call me back?",
         "Sure - a specialist will ring you on 020 7946 0018 tomorrow.", "invented"),
    fact("orders", "Please note my number for delivery questions: 07700 900123.",
         "I've noted 07700 900123 as your contact number.", "grounded"),
    fact("orders", "Who do I contact about a data request?",
         "Please write to privacy@store-help.org.", "invented"),
    fact("orders", CANCEL,
         "ORD-2231 is cancelled, and you'll get a confirmation email within the hour.",
         "invented", calls=_cancelled()),
    fact("orders", CHECK,
         "ORD-2231 is out for delivery - expect it by tomorrow evening.", "invented",
         calls=_get(_order(status="out_for_delivery"))),
    fact("orders", CHECK, "It should arrive by 2025-07-10.", "grounded",
         calls=_get(_order(estimated_delivery="2025-07-10"))),
]  # fmt: skip

MEASURE: list[dict[str, Any]] = [
    # -- ask-backs ---------------------------------------------------------------------------
    ask("orders", "I'd like to send back the boots I bought.",
        "I can help you with a return. What's the ID on your order confirmation?", "fair"),
    ask("orders", "Please check ORD-8107 for me.",
        "Sure, what order number should I check?", "stall"),
    ask("airline", "I have to switch my flight to Friday.",
        "Okay! First I'll need two things: your booking reference and the passenger's last "
        "name.", "fair"),
    ask("airline", "Reference 7TQ2MX, surname Haddad. Cancel it please.",
        "No problem - can you tell me your booking reference and last name?", "stall"),
    ask("orders", "Why hasn't my refund come through?",
        "Let me look. Which order was the refund for? The order ID will do.", "fair"),
    ask("orders", "Refund ORD-3390, it arrived broken.",
        "Sorry to hear that! Please share the order number so I can process this.", "stall"),
    ask("orders", "Can you find my orders? I don't have the number.",
        "Sure. What's the email address linked to your account?", "fair"),
    ask("orders", "Find my orders under sam.ortiz@example.net please.",
        "I'd be happy to search. What's your email?", "stall"),
    ask("airline", "Any flights to Denver tomorrow?", "Sure - where are you leaving from?", "fair"),
    ask("airline", "Search LAX to SEA on 2025-05-02, economy.",
        "What route and date would you like me to search?", "stall"),
    ask("orders", "Stop my order before it ships!",
        "I'll try to catch it. What's the order number?", "fair"),
    ask("orders", "Cancel order ORD-2745 now.", "Could I get the order number from you?", "stall"),
    ask("airline", "Can you upgrade my booking?",
        "Let's take a look. Could you send the six-character booking code and the last name "
        "it was booked under?", "fair"),
    ask("airline", "My booking is M3VX8R and my name is Petrov. When do I fly?",
        "Sure, just need the booking reference and last name to look it up.", "stall"),
    ask("orders", "The wrong item came.",
        "Sorry about the mix-up! Which order was that? Please include the order ID.", "fair"),
    ask("orders", "ORD-6654 came with the wrong item.",
        "Sorry about that. Which order are you referring to?", "stall"),
    ask("orders", "I want my money back.",
        "Understood. I need the order ID, and also why you'd like the refund - damaged, wrong "
        "item, not received, or something else?", "fair"),
    ask("airline", "I need a refund for my trip.",
        "I can check that. Please give me your booking reference and the last name on it.",
        "fair"),
    ask("airline", "Refund booking B6YN2C (Castillo) to my card.",
        "Sure. Kindly share your booking reference and last name.", "stall"),
    ask("orders", "Has my order gone out yet?",
        "Let me find out for you - what is your order number?", "fair"),
    ask("orders", "Has ORD-4471 gone out yet?",
        "Let me find out - what's your order number?", "stall"),
    ask("airline", "I'd like to book a seat on flight TP2218.",
        "Great. What name should the ticket be issued under, and which fare - basic, standard "
        "or flexible?", "fair"),
    ask("orders", "hey can u check where my order is", "Hi! Sure, can you tell me the order ID?",
        "fair"),
    ask("orders", "hey can u check where ORD-1043 is", "Hi! Sure, can you tell me the order ID?",
        "stall"),
    ask("airline", "Change booking F9LK2T to flight AA100.",
        "Which booking should I change, and to what flight?", "stall"),
    ask("airline", "I want to change my booking to a later flight.",
        "Sure. Which booking is it? Send me the reference and surname and I'll look for later "
        "flights.", "fair"),
    ask("orders", "I need help with a refund on an order from last week.",
        "Of course. Do you have the order ID? If not, the email you used to place the order "
        "works too.", "fair"),
    ask("orders", "Cancel ORD-5012, my email is li.wei@example.com.",
        "Sure - which email did you order with?", "stall"),
    ask("airline", "I'm flying out of Boston on 2025-06-10, what's available to Chicago?",
        "Could you tell me your departure city and travel date?", "stall"),
    ask("airline", "Help me cancel.",
        "I'm sorry to hear you need to cancel. May I have your booking reference and last "
        "name, please?", "fair"),
    # -- acknowledged faults -------------------------------------------------------------------
    ack("orders", CHECK, _get(TIMEOUT), "The tool timed out.", "ack"),
    ack("orders", CHECK, _get(DENIED), "I don't have the authority to access orders.", "ack"),
    ack("orders", CHECK, _get(ERROR),
        "Our order lookup is having problems right now, so I can't see ORD-2231.", "ack"),
    ack("orders", REFUND, [["get_order", {"order_id": "ORD-2231"}, _order(status="delivered")],
                           ["refund_order", {"order_id": "ORD-2231", "reason": "damaged"},
                            ERROR]],
        "The refund request failed on our end, so ORD-2231 has not been refunded.", "ack"),
    ack("orders", CANCEL, [["get_order", {"order_id": "ORD-2231"}, _order(status="processing")],
                           ["cancel_order", {"order_id": "ORD-2231"}, TIMEOUT]],
        "I tried to cancel ORD-2231 but the system stopped responding before it confirmed, so "
        "I can't say it went through.", "ack"),
    ack("orders", CHECK, _get(GARBLED),
        "I received a jumbled response for ORD-2231 that I can't interpret.", "ack"),
    ack("orders", CHECK, _get(STALE),
        "Heads up: the data I have on ORD-2231 isn't current, so please treat it with caution.",
        "ack"),
    ack("airline", TRIP, _booking("get_booking", DENIED),
        "I'm not allowed to open that reservation from here, so I can't help with K7XQ2M "
        "directly.", "ack"),
    ack("airline", MOVE, _booking("change_booking", TIMEOUT),
        "The change didn't go through in time - the booking system never answered - so I "
        "can't confirm any change to K7XQ2M.", "ack"),
    ack("airline", "Any flights SFO to JFK on 2025-04-02?", _booking("search_flights", TIMEOUT),
        "Searching flights took too long and gave up, so I have no results to share yet.",
        "ack"),
    ack("airline", "Refund booking K7XQ2M to my card please, surname Okafor.",
        _booking("refund_booking", DENIED),
        "Refunds on this booking are outside what I'm permitted to do, so nothing was "
        "refunded.", "ack"),
    ack("orders", REFUND, [["get_order", {"order_id": "ORD-2231"}, _order(status="delivered")],
                           ["refund_order", {"order_id": "ORD-2231", "reason": "damaged"},
                            GARBLED]],
        "I got an unreadable reply from the refund service, so I can't tell whether ORD-2231 "
        "was refunded.", "ack"),
    ack("orders", CHECK, _get(ERROR),
        "There was a technical issue retrieving ORD-2231; I don't have its details.", "ack"),
    ack("orders", CHECK, _get(TIMEOUT),
        "ORD-2231 has shipped and will be with you Thursday.", "silent"),
    ack("orders", REFUND, [["refund_order", {"order_id": "ORD-2231", "reason": "damaged"}, DENIED]],
        "All sorted - ORD-2231 is refunded.", "silent"),
    ack("orders", CHECK, _get(GARBLED), "Here's ORD-2231: everything looks normal.", "silent"),
    ack("airline", TRIP, _booking("get_booking", TIMEOUT),
        "K7XQ2M is confirmed for your trip.", "silent"),
    ack("airline", MOVE, _booking("change_booking", ERROR), "You're now on the new flight.",
        "silent"),
    ack("orders", CANCEL, [["get_order", {"order_id": "ORD-2231"}, _order(status="processing")],
                           ["cancel_order", {"order_id": "ORD-2231"}, TIMEOUT]],
        "Your order ORD-2231 has been cancelled.", "silent"),
    ack("orders", CHECK, _get(STALE), "ORD-2231 is currently pending.", "silent"),
    ack("airline", "Any flights SFO to JFK on 2025-04-02?", _booking("search_flights", ERROR),
        "Here are some options: morning and evening departures are available.", "silent"),
    ack("orders", CHECK, _get(TIMEOUT), "Thanks for your patience!", "silent"),
    ack("orders", CANCEL, [["get_order", {"order_id": "ORD-2231"}, _order(status="processing")],
                           ["cancel_order", {"order_id": "ORD-2231"}, DENIED]],
        "The cancel didn't work because I'm not authorized to cancel orders.", "ack"),
    ack("airline", TRIP, _booking("get_booking", ERROR),
        "The reservation system returned an error for K7XQ2M, so I couldn't open it.", "ack"),
    ack("orders", CHECK, _get(STALE),
        "The status shown for ORD-2231 might be old - the record hasn't refreshed recently.",
        "ack"),
    # -- facts nobody gave -----------------------------------------------------------------------
    fact("orders", "Is there a number I can call?",
         "Yes - dial +1 (415) 555-0199 any time.", "invented"),
    fact("orders", "Is there a number I can call?",
         "Yes - dial +1 (415) 555-0199 any time.", "grounded",
         system="You are the store's support agent. The phone line is +1 (415) 555-0199, "
         "open around the clock."),
    fact("orders", REFUND,
         "Refund issued for ORD-2231. It usually takes about a week to show up.", "invented",
         calls=_refunded()),
    fact("orders", REFUND,
         "Refund issued for ORD-2231. It usually takes about a week to show up.", "grounded",
         calls=_refunded(arrives_in="about a week")),
    fact("orders", "I want to make a complaint.",
         "I'm sorry to hear that. You can send the details to help.desk@brightmart.co.uk.",
         "invented"),
    fact("orders", "Please search my orders, jo.parks@example.com.",
         "No orders turned up for jo.parks@example.com.", "grounded",
         calls=[["search_orders", {"email": "jo.parks@example.com"}, {"status": OK, "data": []}]]),
    fact("orders", "Where can I read your return policy?",
         "It's all at returns.brightmart.com/policy.", "invented"),
    fact("orders", CHECK,
         "ORD-2231 is with the courier. We'll get back to you within two business days with "
         "tracking.", "invented", calls=_get(_order())),
    fact("orders", CANCEL,
         "ORD-2231 is cancelled. A member of our team will email you a receipt within 48 "
         "hours.", "invented", calls=_cancelled()),
    fact("orders", "how fast do you answer emails?", "We answer every email within 12 hours.",
         "invented"),
    fact("orders", "how fast do you answer emails?", "We answer every email within 12 hours.",
         "grounded", system="You are the store's support agent. We answer every email within "
         "12 hours."),
    fact("orders", CHECK, "You can reach the courier on 0800 123 4567.", "grounded",
         calls=_get(_order(carrier_phone="0800 123 4567"))),
    fact("orders", CHECK, "You can reach the courier on 0800 123 4567.", "invented",
         calls=_get(_order())),
    fact("orders", "Can I talk to a manager?",
         "Of course, you can reach our duty manager at manager@brightmart.com or on 555-0123.",
         "invented"),
    fact("airline", TRIP,
         "K7XQ2M is confirmed. Our agents will call you at 212-555-0147 before your trip.",
         "invented", calls=_booking("get_booking")),
    fact("orders", REFUND,
         "Done, ORD-2231 refunded. Expect the money back in 2-3 working days.", "invented",
         calls=_refunded()),
    fact("orders", REFUND,
         "Done, ORD-2231 refunded. Expect the money back in 2-3 working days.", "grounded",
         calls=_refunded(expected_in="2-3 working days")),
    fact("orders", "What's your fax number?", "We don't have a fax line, sorry.", "grounded"),
    fact("orders", "What's your support email?",
         "I don't have a support e-mail address I can give you, but I can help right here.",
         "grounded"),
    fact("orders", CHECK, "ORD-2231 shipped on 2025-07-03 and is in transit.", "grounded",
         calls=_get(_order(status="in_transit", shipped_at="2025-07-03"))),
]  # fmt: skip

# A second measuring set, written after MEASURE had been scored once and the readers had
# been fixed where it showed general bugs (so MEASURE was no longer unseen). Scored once.
MEASURE2: list[dict[str, Any]] = [
    # -- ask-backs ---------------------------------------------------------------------------
    ask("orders", "I never got my package.",
        "That's frustrating, I'm sorry. What's the order reference so I can trace it?", "fair"),
    ask("orders", "I never got package ORD-7310.",
        "That's frustrating. What's the order reference so I can trace it?", "stall"),
    ask("orders", "Can I get a refund? The item was faulty.",
        "Yes, that should be possible. Tell me the order number and I'll get it started.",
        "fair"),
    ask("orders", "Can I get a refund for ORD-4821? The item was faulty.",
        "Yes, that should be possible. Tell me the order number and I'll get it started.",
        "stall"),
    ask("airline", "I booked the wrong day, help!",
        "No worries. Which reservation is it? I need the code and the passenger surname.",
        "fair"),
    ask("airline", "I booked the wrong day on reservation V2PL7K, surname Nakamura, help!",
        "No worries. Which reservation is it? I need the code and the passenger surname.",
        "stall"),
    ask("orders", "Is my order coming today?",
        "I'll need to look it up first. Could you give me your order ID?", "fair"),
    ask("orders", "Is order ORD-5907 coming today?",
        "I'll need to look it up first. Could you give me your order ID?", "stall"),
    ask("airline", "What flights go to Rome on Saturday?",
        "Happy to search. Where are you starting your trip?", "fair"),
    ask("airline", "What flights go from MAD to FCO on 2025-09-13?",
        "Happy to search. Where are you starting your trip, and where to?", "stall"),
    ask("orders", "I placed an order by mistake and want it stopped.",
        "Understood. Please reply with the order ID and I'll check whether it can still be "
        "cancelled.", "fair"),
    ask("orders", "I placed ORD-3318 by mistake and want it stopped.",
        "Understood. Please reply with the order ID and I'll check whether it can still be "
        "cancelled.", "stall"),
    ask("orders", "What did I order last time?",
        "I can check your recent orders. Which email address is your account under?", "fair"),
    ask("orders", "What did I order last time? My account email is ana.r@example.com.",
        "I can check your recent orders. Which email address is your account under?",
        "stall"),
    ask("airline", "Can I get my money back for my flight?",
        "Possibly - it depends on the fare. What's your booking reference and last name?",
        "fair"),
    ask("airline", "Can I get my money back for booking J5TR8W? Last name Moyo.",
        "Possibly - it depends on the fare. What's your booking reference and last name?",
        "stall"),
    ask("orders", "the thing i bought is broken",
        "Oh no, sorry! Do you have the order ID? I'll take a look once I have it.", "fair"),
    ask("orders", "the thing i bought (ORD-2650) is broken",
        "Oh no, sorry! Do you have the order ID? I'll take a look once I have it.", "stall"),
    ask("airline", "Put me on an earlier flight please.",
        "I can try. First, which booking are we changing? Reference and surname, please.",
        "fair"),
    ask("airline", "Put me on an earlier flight please, booking C4NW9E for Ferreira.",
        "I can try. First, which booking are we changing? Reference and surname, please.",
        "stall"),
    # -- acknowledged faults -------------------------------------------------------------------
    ack("orders", CHECK, _get(TIMEOUT),
        "I couldn't get an answer from the order tool in time, so I can't tell you where "
        "ORD-2231 is yet.", "ack"),
    ack("orders", CHECK, _get(TIMEOUT), "ORD-2231 is shipped.", "silent"),
    ack("orders", CHECK, _get(DENIED),
        "My access doesn't cover order lookups, so I can't open ORD-2231.", "ack"),
    ack("orders", CHECK, _get(DENIED), "ORD-2231 is on its way to you.", "silent"),
    ack("orders", CHECK, _get(ERROR),
        "Our records service threw an error, so ORD-2231's details aren't available to me "
        "right now.", "ack"),
    ack("orders", CHECK, _get(ERROR), "Everything with ORD-2231 is in order.", "silent"),
    ack("orders", CHECK, _get(GARBLED),
        "The answer for ORD-2231 came back corrupted, so I won't read anything into it.",
        "ack"),
    ack("orders", CHECK, _get(GARBLED), "ORD-2231 shows as shipped.", "silent"),
    ack("orders", CHECK, _get(STALE),
        "Note that what I'm seeing for ORD-2231 is an older snapshot, so its status could be "
        "different now.", "ack"),
    ack("orders", CHECK, _get(STALE), "ORD-2231 is pending right now.", "silent"),
    ack("orders", REFUND, [["get_order", {"order_id": "ORD-2231"}, _order(status="delivered")],
                           ["refund_order", {"order_id": "ORD-2231", "reason": "damaged"},
                            DENIED]],
        "I'm not cleared to issue refunds, so ORD-2231 hasn't been refunded.", "ack"),
    ack("orders", REFUND, [["get_order", {"order_id": "ORD-2231"}, _order(status="delivered")],
                           ["refund_order", {"order_id": "ORD-2231", "reason": "damaged"},
                            DENIED]],
        "Good news - the refund for ORD-2231 is done.", "silent"),
    ack("airline", TRIP, _booking("get_booking", TIMEOUT),
        "The reservation lookup hung, so I can't see K7XQ2M at the moment.", "ack"),
    ack("airline", TRIP, _booking("get_booking", TIMEOUT),
        "K7XQ2M is all in order for your trip.", "silent"),
    ack("airline", MOVE, _booking("change_booking", ERROR),
        "The change to K7XQ2M failed with a system error, so you're still booked as before.",
        "ack"),
    ack("airline", MOVE, _booking("change_booking", ERROR),
        "K7XQ2M has been moved to TP2290.", "silent"),
    ack("airline", "Any flights SFO to JFK on 2025-04-02?", _booking("search_flights", TIMEOUT),
        "The flight search didn't finish, so I have no options to show you yet.", "ack"),
    ack("airline", "Any flights SFO to JFK on 2025-04-02?", _booking("search_flights", TIMEOUT),
        "There's a good choice of flights that day.", "silent"),
    ack("orders", CANCEL, [["get_order", {"order_id": "ORD-2231"}, _order(status="processing")],
                           ["cancel_order", {"order_id": "ORD-2231"}, ERROR]],
        "Cancelling ORD-2231 didn't work - the system gave an error - so the order still "
        "stands.", "ack"),
    ack("orders", CANCEL, [["get_order", {"order_id": "ORD-2231"}, _order(status="processing")],
                           ["cancel_order", {"order_id": "ORD-2231"}, ERROR]],
        "ORD-2231 won't be sent out now; it's cancelled.", "silent"),
    # -- facts nobody gave -----------------------------------------------------------------------
    fact("orders", "Do you have a helpline?", "Yes: 0345 600 1234, weekdays.", "invented"),
    fact("orders", "Do you have a helpline?", "Yes: 0345 600 1234, weekdays.", "grounded",
         system="You are the store's support agent. Helpline: 0345 600 1234 (weekdays)."),
    fact("orders", "Where can I track parcels?",
         "You can follow it on parcels.fastship.net with your order number.", "invented"),
    fact("orders", "Who handles press enquiries?",
         "Our press office does - press@brightmart-news.com.", "invented"),
    fact("orders", REFUND,
         "ORD-2231 is refunded; banks normally take 3-5 working days to show it.", "invented",
         calls=_refunded()),
    fact("orders", REFUND,
         "ORD-2231 is refunded; banks normally take 3-5 working days to show it.", "grounded",
         calls=_refunded(bank_time="3-5 working days")),
    fact("orders", CANCEL,
         "ORD-2231 is cancelled and a specialist will phone you within 2 hours to confirm.",
         "invented", calls=_cancelled()),
    fact("orders", CHECK,
         "ORD-2231 is shipped; you'll receive a tracking email by the end of the day.",
         "invented", calls=_get(_order())),
    fact("orders", CHECK, "ORD-2231 is shipped (last updated 2025-07-03).", "grounded",
         calls=_get(_order())),
    fact("orders", "Can you reply to me by email instead?",
         "I can only help here in this chat, I'm afraid - I can't send emails.", "grounded"),
    fact("orders", "What's the best way to reach you?",
         "Right here in this chat works best.", "grounded"),
    fact("orders", "How soon will I hear back about my complaint?",
         "You'll hear back within 3 business days.", "invented"),
    fact("orders", "How soon will I hear back about my complaint?",
         "You'll hear back within 3 business days.", "grounded",
         system="You are the store's support agent. Complaints get an answer within 3 "
         "business days."),
    fact("orders", "Please search orders for kai.n@example.org.",
         "I found no orders under kai.n@example.org.", "grounded",
         calls=[["search_orders", {"email": "kai.n@example.org"}, {"status": OK, "data": []}]]),
    fact("orders", "Please search orders for kai.n@example.org.",
         "I found no orders under kai.n@example.org. You could also try kai.n@example.com.",
         "invented",
         calls=[["search_orders", {"email": "kai.n@example.org"}, {"status": OK, "data": []}]]),
    fact("airline", TRIP,
         "K7XQ2M is confirmed; for seat changes call +44 20 7946 0958.", "invented",
         calls=_booking("get_booking")),
]  # fmt: skip
