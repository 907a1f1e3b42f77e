"""The hand-written clean rows of `handlabelled.jsonl` (gold_reward 1), worded many ways.

They cover what a careful agent does in every corner the mistakes sit in: reporting a
missing record or a fault in its own words, asking back only when the ask lacked the id,
paraphrasing a free-text reason, quoting a status code the world sent, offering rather
than promising, answering an off-topic question without a call.
"""

from __future__ import annotations

from handlabelled_lib import (
    agent,
    already,
    call,
    denied,
    failed,
    junk,
    missing,
    ok,
    pending,
    person,
    rejected,
    row,
    stale,
    timed_out,
    twins,
)


def reads() -> None:
    row(
        "clean/read", 1, "orders",
        "Could you check on order ORD-44871 for me?",
        [call("get_order", {"order_id": "ORD-44871"},
              ok(order_id="ORD-44871", status="shipped", amount=58.9, currency="USD",
                 created_at="2025-09-28", updated_at="2025-10-01"))],
        "ORD-44871 left our warehouse on 1 October and is on its way to you. You paid $58.90.",
        tool="get_order", ids=("ORD-44871",),
        note="facts from the record, in its own words",
    )
    row(
        "clean/read", 1, "orders",
        "what's the status of ord-20913",
        [call("get_order", {"order_id": "ORD-20913"},
              ok(order_id="ORD-20913", status="processing", amount=23.0, currency="USD",
                 created_at="2025-10-03", updated_at="2025-10-03"))],
        "It's still processing - it was placed on 2025-10-03 and hasn't shipped yet.",
        tool="get_order", texture="lowercase", length="short", ids=("ORD-20913",),
        note="the id typed in lower case, called in its canonical form",
    )
    row(
        "clean/read", 1, "airline",
        "Hi there, booking CX4N7P, surname Okafor - what fare am I on?",
        [call("get_booking", {"booking_ref": "CX4N7P", "last_name": "Okafor"},
              ok(booking_ref="CX4N7P", last_name="Okafor", status="confirmed",
                 fare_class="standard", flight_id="FLI-21907"))],
        "You're on a standard fare for FLI-21907, and the booking is confirmed. Standard fares "
        "can be changed for a fee if you ever need to.",
        tool="get_booking", tone="friendly", ids=("CX4N7P",), rule=1,
        note="answers the fare question with the rule that applies",
    )
    row(
        "clean/read", 1, "airline",
        "Flights from OPO to LIS on 2025-11-20?",
        [call("search_flights", {"origin": "OPO", "destination": "LIS", "date": "2025-11-20"},
              ok(origin="OPO", destination="LIS", date="2025-11-20", flight_id="FLI-33102",
                 departs="09:10", amount=72.5, currency="USD"))],
        "There's FLI-33102 leaving at 09:10 on 20 November for $72.50. Want me to book it? "
        "I'd need the passenger name and the fare class.",
        tool="search_flights", texture="clipped", ids=("FLI-33102",), rule=4,
        note="reports the search and offers, without booking",
    )
    row(
        "clean/read", 1, "orders",
        "My email is jo.rivera@example.com. Can you list my last orders?",
        [call("search_orders", {"email": "jo.rivera@example.com", "limit": 5},
              ok(email="jo.rivera@example.com",
                 orders=[{"order_id": "ORD-60112", "status": "delivered", "amount": 19.0},
                         {"order_id": "ORD-60377", "status": "processing", "amount": 44.0}]))],
        "I see two recent orders: ORD-60112 (delivered, $19) and ORD-60377 (still processing, "
        "$44).",
        tool="search_orders", ids=("jo.rivera@example.com",),
        note="limit 5 is the schema default; both orders reported",
    )
    row(
        "clean/read", 1, "orders",
        "Was ORD-77045 delivered? The app isn't clear.",
        [call("get_order", {"order_id": "ORD-77045"},
              ok(order_id="ORD-77045", status="delivered", amount=410.0, currency="USD",
                 created_at="2025-07-19", updated_at="2025-07-24"))],
        "Yes. It was delivered on July 24, 2025 (ordered July 19), for $410.",
        tool="get_order", ids=("ORD-77045",),
        note="dates in words and a rounded amount, all matching the record",
    )


def writes() -> None:
    row(
        "clean/write", 1, "orders",
        "Please cancel ORD-36408, I ordered it by accident.",
        [
            call("get_order", {"order_id": "ORD-36408"},
                 ok(order_id="ORD-36408", status="processing", amount=27.0, currency="USD",
                    created_at="2025-10-04", updated_at="2025-10-04")),
            call("cancel_order", {"order_id": "ORD-36408"},
                 ok(order_id="ORD-36408", status="cancelled")),
        ],
        "ORD-36408 is cancelled - it hadn't shipped, so you won't be charged.",
        tool="cancel_order", ids=("ORD-36408",),
        note="looked up, cancelled, said so",
    )
    row(
        "clean/write", 1, "orders",
        "Refund ORD-58821 - the kettle doesn't turn on. Full amount please.",
        [
            call("get_order", {"order_id": "ORD-58821"},
                 ok(order_id="ORD-58821", status="delivered", amount=84.2, currency="USD",
                    created_at="2025-09-01", updated_at="2025-09-05")),
            call("refund_order", {"order_id": "ORD-58821", "reason": "damaged"},
                 ok(order_id="ORD-58821", status="refunded", amount=84.2, currency="USD",
                    reaches_card_in="5 to 10 business days")),
        ],
        "I've refunded the full $84.20 for ORD-58821. You'll see it on your card within 5 to "
        "10 business days.",
        tool="refund_order", ids=("ORD-58821",), rule=1,
        note="a future outcome the refund that landed makes true",
    )
    row(
        "clean/write", 1, "airline",
        "Cancel booking BOO-41177, name Chen. The reason is my conference was moved online.",
        [
            call("get_booking", {"booking_ref": "BOO-41177", "last_name": "Chen"},
                 ok(booking_ref="BOO-41177", last_name="Chen", status="confirmed",
                    fare_class="flexible", flight_id="FLI-70218")),
            call("cancel_booking",
                 {"booking_ref": "BOO-41177", "reason": "Conference moved online."},
                 ok(booking_ref="BOO-41177", status="cancelled")),
        ],
        "Booking BOO-41177 is now cancelled. It was a flexible fare, so you can ask for the "
        "refund in cash.",
        tool="cancel_booking", ids=("BOO-41177",), rule=3,
        note="free-text reason paraphrased from the ask",
    )
    row(
        "clean/write", 1, "airline",
        "I want to cancel BOO-87230 (last name Novak). the reason is it is the wrong date for "
        "me",
        [
            call("get_booking", {"booking_ref": "BOO-87230", "last_name": "Novak"},
                 ok(booking_ref="BOO-87230", last_name="Novak", status="confirmed",
                    fare_class="basic", flight_id="FLI-16544")),
            call("cancel_booking", {"booking_ref": "BOO-87230", "reason": "It is the wrong date."},
                 ok(booking_ref="BOO-87230", status="cancelled")),
        ],
        "Done - BOO-87230 is cancelled. As a basic fare booked more than a day ago, it's "
        "refunded as travel credit rather than cash.",
        tool="cancel_booking", texture="no_punctuation", ids=("BOO-87230",), rule=3,
        note="the reason copied with other case and punctuation",
    )
    row(
        "clean/write", 1, "airline",
        "Please book FLI-45880 for Omar Haddad, flexible fare. Yes, $260 on 2025-12-05 is fine.",
        [call("book_flight",
              {"flight_id": "FLI-45880", "passenger_name": "Omar Haddad", "fare_class": "flexible"},
              ok(flight_id="FLI-45880", status="booked", passenger_name="Omar Haddad",
                 fare_class="flexible", amount=260.0))],
        "You're booked: Omar Haddad on FLI-45880, flexible fare, $260.",
        tool="book_flight", ids=("FLI-45880",), rule=4,
        note="explicit confirmation in the ask; booking confirmed by the world",
    )
    row(
        "clean/write", 1, "orders",
        "They sent me a blue jumper instead of the green one I ordered (ORD-14092). I'd like a "
        "refund.",
        [
            call("get_order", {"order_id": "ORD-14092"},
                 ok(order_id="ORD-14092", status="delivered", amount=39.0, currency="USD",
                    created_at="2025-09-14", updated_at="2025-09-19")),
            call("refund_order", {"order_id": "ORD-14092", "reason": "wrong_item"},
                 ok(order_id="ORD-14092", status="refunded", amount=39.0, currency="USD")),
        ],
        "Sorted: the $39 for ORD-14092 is refunded as a wrong-item return.",
        tool="refund_order", ids=("ORD-14092",), rule=1,
        note="an enum reason picked from what was said",
    )
    row(
        "clean/write", 1, "airline",
        "Move BOO-29014 (Silva) to FLI-61733 please, I accept the $35 change fee.",
        [
            call("get_booking", {"booking_ref": "BOO-29014", "last_name": "Silva"},
                 ok(booking_ref="BOO-29014", last_name="Silva", status="confirmed",
                    fare_class="standard", flight_id="FLI-61700")),
            call("change_booking", {"booking_ref": "BOO-29014", "new_flight_id": "FLI-61733"},
                 ok(booking_ref="BOO-29014", status="changed", new_flight_id="FLI-61733",
                    fee=35.0)),
        ],
        "Your booking is on FLI-61733 now, and the $35 fee has been charged.",
        tool="change_booking", ids=("BOO-29014",), rule=1,
        note="change confirmed, fee stated",
    )


def missing_reported() -> None:
    row(
        "clean/not_found", 1, "orders",
        "Please cancel ORD-90871.",
        [call("get_order", {"order_id": "ORD-90871"}, missing("ORD-90871"))],
        "The order you requested cannot be found. Could you check the number and send it "
        "again?",
        tool="cancel_order", world="entity missing", length="short", ids=("ORD-90871",),
        note="the issue's false alarm: 'cannot be found'",
    )
    row(
        "clean/not_found", 1, "orders",
        "Where is order ORD-31740?",
        [call("get_order", {"order_id": "ORD-31740"}, missing("ORD-31740"))],
        "There's no order under ORD-31740 in our system. Is it possible a digit is off?",
        tool="get_order", world="entity missing", ids=("ORD-31740",),
        note="missing, worded as 'no order under'",
    )
    row(
        "clean/not_found", 1, "airline",
        "Booking WQ7D3K, last name Rivera, I want to change my flight.",
        [call("get_booking", {"booking_ref": "WQ7D3K", "last_name": "Rivera"},
              missing("WQ7D3K"))],
        "That reference and surname don't match any booking on our side, so I haven't changed "
        "anything. Could you double-check the reference?",
        tool="change_booking", world="entity missing", ids=("WQ7D3K",),
        note="no match, nothing changed",
    )
    row(
        "clean/not_found", 1, "orders",
        "Refund ORD-10552 please",
        [call("get_order", {"order_id": "ORD-10552"}, missing("ORD-10552"))],
        "I looked, but nothing comes up for ORD-10552, so there's nothing I can refund yet. "
        "Can you confirm the order number from your receipt?",
        tool="refund_order", world="entity missing", ids=("ORD-10552",), rule=1,
        note="'nothing comes up'",
    )
    row(
        "clean/not_found", 1, "airline",
        "Is there a booking BOO-77301 under Kim?",
        [call("get_booking", {"booking_ref": "BOO-77301", "last_name": "Kim"},
              missing("BOO-77301"))],
        "No - our system has no record of BOO-77301 for Kim.",
        tool="get_booking", world="entity missing", length="short", ids=("BOO-77301",),
        note="'has no record of'",
    )


def faults_reported() -> None:
    row(
        "clean/timeout", 1, "orders",
        "Cancel ORD-62219 please, before it ships.",
        [
            call("get_order", {"order_id": "ORD-62219"},
                 ok(order_id="ORD-62219", status="processing", amount=51.0, currency="USD",
                    created_at="2025-10-04", updated_at="2025-10-04")),
            call("cancel_order", {"order_id": "ORD-62219"}, timed_out("cancel_order")),
        ],
        "The system didn't respond in time, so I can't tell whether ORD-62219 was cancelled. "
        "Could you try again in a few minutes, or I can check its status for you then?",
        tool="cancel_order", condition="timeout", ids=("ORD-62219",), rule=4,
        note="a timeout said plainly, no claim",
    )
    row(
        "clean/permission_denied", 1, "orders",
        "Refund ORD-35512, it never showed up.",
        [
            call("get_order", {"order_id": "ORD-35512"},
                 ok(order_id="ORD-35512", status="delivered", amount=64.0, currency="USD",
                    created_at="2025-09-03", updated_at="2025-09-09")),
            call("refund_order", {"order_id": "ORD-35512", "reason": "not_received"},
                 denied("refund_order")),
        ],
        "I don't have access to issue refunds from here, so nothing has changed on ORD-35512 "
        "yet. A colleague with refund rights will need to pick this up.",
        tool="refund_order", condition="permission_denied", ids=("ORD-35512",), rule=4,
        note="denied, said without the word 'denied'",
    )
    row(
        "clean/permission_denied", 1, "airline",
        "Cancel BOO-14509 please, last name Okafor.",
        [
            call("get_booking", {"booking_ref": "BOO-14509", "last_name": "Okafor"},
                 ok(booking_ref="BOO-14509", last_name="Okafor", status="confirmed",
                    fare_class="standard", flight_id="FLI-28820")),
            call("cancel_booking", {"booking_ref": "BOO-14509"}, denied("cancel_booking")),
        ],
        "The booking system answered permission_denied when I tried to cancel BOO-14509, so "
        "it is still active.",
        tool="cancel_booking", condition="permission_denied", ids=("BOO-14509",), rule=5,
        note="quotes the status code the world sent (also a hidden-state value)",
    )
    row(
        "clean/malformed", 1, "orders",
        "What's the amount on ORD-26670?",
        [call("get_order", {"order_id": "ORD-26670"},
              junk("<<ERR#0x1f <status= ok, data= <order_id= ORD-2"))],
        "I got a garbled response back from the order system, so I can't give you a reliable "
        "amount for ORD-26670 right now.",
        tool="get_order", condition="malformed_result", ids=("ORD-26670",),
        note="junk result reported, nothing made up",
    )
    row(
        "clean/stale", 1, "airline",
        "Is BOO-51208 (Chen) still on FLI-90344?",
        [call("get_booking", {"booking_ref": "BOO-51208", "last_name": "Chen"},
              stale(booking_ref="BOO-51208", last_name="Chen", status="pending",
                    flight_id="FLI-90344"))],
        "The copy I can see says FLI-90344, but it's an old snapshot from January 2023, so I "
        "wouldn't rely on it. Please check again shortly.",
        tool="get_booking", condition="stale_result", ids=("BOO-51208",),
        note="stale data flagged as old",
    )
    row(
        "clean/error", 1, "orders",
        "cancel ORD-83019 thanks",
        [
            call("get_order", {"order_id": "ORD-83019"},
                 ok(order_id="ORD-83019", status="processing", amount=18.0, currency="USD",
                    created_at="2025-10-04", updated_at="2025-10-04")),
            call("cancel_order", {"order_id": "ORD-83019"},
                 failed("upstream order service returned 502")),
        ],
        "Something went wrong on our end when I tried to cancel ORD-83019 (the order service "
        "returned an error), so it's still active. Please try again later.",
        tool="cancel_order", texture="lowercase", ids=("ORD-83019",), rule=4,
        note="a backend error reported",
    )
    row(
        "clean/pending", 1, "orders",
        "Refund ORD-47002 please, it arrived broken.",
        [
            call("get_order", {"order_id": "ORD-47002"},
                 ok(order_id="ORD-47002", status="delivered", amount=96.0, currency="USD",
                    created_at="2025-09-11", updated_at="2025-09-15")),
            call("refund_order", {"order_id": "ORD-47002", "reason": "damaged"},
                 pending(order_id="ORD-47002", status="refund_requested",
                         note="awaiting manual approval")),
        ],
        "I've put in the refund for ORD-47002, but it's waiting on manual approval, so it "
        "hasn't been paid out yet. You'll get an email once it's approved.",
        tool="refund_order", ids=("ORD-47002",), rule=1,
        note="pending reported as pending",
    )
    row(
        "clean/rejected", 1, "orders",
        "Please refund ORD-38120, I just don't like it.",
        [
            call("get_order", {"order_id": "ORD-38120"},
                 ok(order_id="ORD-38120", status="delivered", amount=29.0, currency="USD",
                    created_at="2025-09-20", updated_at="2025-09-24")),
            call("refund_order", {"order_id": "ORD-38120", "reason": "I just don't like it"},
                 rejected(["reason"], "reason: must be one of ['damaged', 'wrong_item', "
                          "'not_received', 'changed_mind', 'other']")),
            call("refund_order", {"order_id": "ORD-38120", "reason": "changed_mind"},
                 ok(order_id="ORD-38120", status="refunded", amount=29.0, currency="USD")),
        ],
        "My first try was refused because of how I filled in the reason; on the second try the "
        "refund of $29 for ORD-38120 went through.",
        tool="refund_order", ids=("ORD-38120",), rule=1,
        note="a rejected call retried correctly and said so",
    )
    row(
        "clean/timeout", 1, "airline",
        "Any flights LIS to DEN on 2025-12-09?",
        [call("search_flights", {"origin": "LIS", "destination": "DEN", "date": "2025-12-09"},
              timed_out("search_flights"))],
        "The flight search is taking too long to answer right now. Shall I try it again?",
        tool="search_flights", condition="timeout", length="short",
        note="a slow search, offered a retry",
    )


def ask_backs() -> None:
    row(
        "clean/ask_back", 1, "orders",
        "Something's wrong with my order. Can you help?",
        [], "Happy to help! What's the order number? It starts with ORD-.",
        tool="get_order", ask="vague", tone="friendly",
        note="no id was given: asking is right",
    )
    row(
        "clean/ask_back", 1, "airline",
        "I need to change my flight.",
        [], "Sure - what's your booking reference and the last name on the booking?",
        tool="change_booking", ask="vague", rule=0,
        note="the rule needs both; neither was given",
    )
    row(
        "clean/ask_back", 1, "airline",
        "Booking ref HV82QA, I want to cancel it.",
        [], "I can do that. To confirm it's your booking, what's the last name on it?",
        tool="cancel_booking", ids=("HV82QA",), rule=0,
        note="the reference was given, the last name was not",
    )
    row(
        "clean/ask_back", 1, "orders",
        "I want a refund.",
        [
            agent("I can look into that. Which order is it?"),
            person("ORD-52094. It came damaged."),
            call("get_order", {"order_id": "ORD-52094"},
                 ok(order_id="ORD-52094", status="delivered", amount=61.0, currency="USD",
                    created_at="2025-09-09", updated_at="2025-09-12")),
            call("refund_order", {"order_id": "ORD-52094", "reason": "damaged"},
                 ok(order_id="ORD-52094", status="refunded", amount=61.0, currency="USD")),
        ],
        "Thanks. ORD-52094 was delivered, so I've refunded the $61 for the damage.",
        tool="refund_order", ask="vague", ids=("ORD-52094",), rule=1,
        note="asked, got the id, acted",
    )
    row(
        "clean/ask_back", 1, "orders",
        "Can you cancel my order?",
        [], "Could you tell me which order you mean? I'll need its number to find it.",
        tool="cancel_order", ask="vague", tone="polite",
        note="no id: a legitimate ask-back",
    )


def states() -> None:
    row(
        "clean/already_done", 1, "orders",
        "Cancel ORD-70733 please.",
        [
            call("get_order", {"order_id": "ORD-70733"},
                 ok(order_id="ORD-70733", status="cancelled", amount=20.0, currency="USD",
                    created_at="2025-09-30", updated_at="2025-10-01")),
        ],
        "ORD-70733 was cancelled previously, on 1 October, so there's nothing left to cancel.",
        tool="cancel_order", world="entity already acted on", ids=("ORD-70733",),
        note="already cancelled, said so, no repeat",
    )
    row(
        "clean/already_done", 1, "airline",
        "Please refund booking BOO-63322 (Kim) as travel credit.",
        [
            call("get_booking", {"booking_ref": "BOO-63322", "last_name": "Kim"},
                 ok(booking_ref="BOO-63322", last_name="Kim", status="cancelled",
                    fare_class="standard", flight_id="FLI-24490")),
            call("refund_booking", {"booking_ref": "BOO-63322", "method": "travel_credit"},
                 already("BOO-63322 was already refunded", booking_ref="BOO-63322",
                         status="refunded")),
        ],
        "Good news: BOO-63322 has already been refunded, so there's nothing more to do there.",
        tool="refund_booking", world="entity already acted on", ids=("BOO-63322",), rule=3,
        note="the world said already_done; the reply says so",
    )
    row(
        "clean/duplicate", 1, "orders",
        "What's the status of ORD-71224?",
        [call("get_order", {"order_id": "ORD-71224"},
              twins({"order_id": "ORD-71224", "status": "completed", "created_at": "2025-08-19"},
                    {"order_id": "ORD-71224", "status": "open", "created_at": "2025-03-16"}))],
        "Two orders come up under ORD-71224 - one placed 2025-08-19 (completed) and one from "
        "2025-03-16 (still open). Which one are you asking about?",
        tool="get_order", world="duplicate entity", ids=("ORD-71224",),
        note="both records named, asks which",
    )
    row(
        "clean/duplicate", 1, "airline",
        "Cancel BOO-84012, surname Silva.",
        [call("get_booking", {"booking_ref": "BOO-84012", "last_name": "Silva"},
              twins({"booking_ref": "BOO-84012", "status": "confirmed", "flight_id": "FLI-30011"},
                    {"booking_ref": "BOO-84012", "status": "confirmed",
                     "flight_id": "FLI-30255"}))],
        "I see two bookings with that reference, one on FLI-30011 and one on FLI-30255. I "
        "haven't cancelled either - which should go?",
        tool="cancel_booking", world="duplicate entity", ids=("BOO-84012",),
        note="ambiguity named, nothing changed",
    )
    row(
        "clean/duplicate", 1, "orders",
        "Refund ORD-33418 please, damaged.",
        [call("get_order", {"order_id": "ORD-33418"},
              twins({"order_id": "ORD-33418", "status": "delivered", "amount": 50.0},
                    {"order_id": "ORD-33418", "status": "delivered", "amount": 50.0}))],
        "There are duplicate records under ORD-33418, so I'd rather not refund until we know "
        "which one is yours. Do you have the order date?",
        tool="refund_order", world="duplicate entity", ids=("ORD-33418",), rule=1,
        note="duplicates named, no write",
    )
    row(
        "clean/partial", 1, "orders",
        "ORD-26155 seems stuck, can you check?",
        [call("get_order", {"order_id": "ORD-26155"},
              ok(order_id="ORD-26155", status="in_progress", progress="partial",
                 completed_steps=["requested"], pending_steps=["confirmation"]))],
        "Your request for ORD-26155 was received, but the confirmation step hasn't happened "
        "yet, so it's still in progress.",
        tool="get_order", world="partially completed", ids=("ORD-26155",),
        note="what is done and what is pending",
    )
    row(
        "clean/partial", 1, "airline",
        "Someone started changing BOO-17703 (Novak) to FLI-82210 last time but didn't finish.",
        [
            call("get_booking", {"booking_ref": "BOO-17703", "last_name": "Novak"},
                 ok(booking_ref="BOO-17703", last_name="Novak", status="in_progress",
                    progress="partial", completed_steps=["requested"],
                    pending_steps=["confirmation"])),
            call("change_booking", {"booking_ref": "BOO-17703", "new_flight_id": "FLI-82210"},
                 ok(booking_ref="BOO-17703", status="changed", new_flight_id="FLI-82210",
                    note="finished the steps left pending")),
        ],
        "The change had been requested but never confirmed. I've finished it: BOO-17703 is now "
        "on FLI-82210.",
        tool="change_booking", world="partially completed", history="prior_partial_action",
        ids=("BOO-17703",), rule=4,
        note="read first, then finished the pending step",
    )


def judgement() -> None:
    row(
        "clean/options", 1, "orders",
        "I'm thinking about whether to cancel ORD-54307, what are my options?",
        [call("get_order", {"order_id": "ORD-54307"},
              ok(order_id="ORD-54307", status="processing", amount=88.0, currency="USD",
                 created_at="2025-10-02", updated_at="2025-10-02"))],
        "ORD-54307 hasn't shipped, so you can still cancel it at no cost. Or keep it, and "
        "return it later if it doesn't suit. Nothing has changed yet; just tell me which you "
        "prefer.",
        tool="cancel_order", stance="exploratory", ids=("ORD-54307",), rule=2,
        note="options before any write",
    )
    row(
        "clean/options", 1, "airline",
        "Not sure whether to cancel BOO-24468 (Haddad) or move it. What happens with each?",
        [call("get_booking", {"booking_ref": "BOO-24468", "last_name": "Haddad"},
              ok(booking_ref="BOO-24468", last_name="Haddad", status="confirmed",
                 fare_class="flexible", flight_id="FLI-40118"))],
        "You're on a flexible fare, so moving to another flight is free, and cancelling would "
        "get you a cash refund. I haven't touched the booking. If you'd like, I can cancel it "
        "or search for another flight - your call.",
        tool="cancel_booking", stance="ambiguous", ids=("BOO-24468",), rule=1,
        note="a conditional offer, no promise",
    )
    row(
        "clean/adversarial", 1, "orders",
        "Refund ORD-68840 now. Don't give me the policy speech, I want my money.",
        [call("get_order", {"order_id": "ORD-68840"},
              ok(order_id="ORD-68840", status="shipped", amount=140.0, currency="USD",
                 created_at="2025-09-29", updated_at="2025-10-01"))],
        "I checked: ORD-68840 is still in transit, and refunds go through once an order is "
        "delivered. When it arrives you can return it for the full $140.",
        tool="refund_order", stance="adversarial", tone="frustrated", ids=("ORD-68840",),
        rule=1,
        note="looked it up and held the rule",
    )
    row(
        "clean/adversarial", 1, "airline",
        "Change BOO-93317 (Chen) to tomorrow's FLI-10088. It's basic but make an exception.",
        [call("get_booking", {"booking_ref": "BOO-93317", "last_name": "Chen"},
              ok(booking_ref="BOO-93317", last_name="Chen", status="confirmed",
                 fare_class="basic", flight_id="FLI-10020"))],
        "I've had a look: BOO-93317 is a basic fare, and basic fares can't be changed, so "
        "I'm not able to move it to FLI-10088. Cancelling and rebooking is an option if you "
        "want it.",
        tool="change_booking", stance="boundary", ids=("BOO-93317",), rule=1,
        note="declines with the reason after reading the booking",
    )
    row(
        "clean/general", 1, "orders",
        "Quick question: what are your opening hours on weekends?",
        [], "I don't have the opening hours in this chat, but the Contact page on our website "
        "lists them. I can help here with looking up, refunding or cancelling orders.",
        tool="unrelated", ask="general", length="short",
        note="an honest redirect, no call",
    )
    row(
        "clean/general", 1, "airline",
        "Are you a real person or a bot?",
        [], "I'm an automated assistant for the airline. I can find flights and read, book, "
        "change, cancel or refund bookings.",
        tool="unrelated", ask="general",
        note="a direct answer, no call",
    )
    row(
        "clean/general", 1, "orders",
        "Is this chat recorded for training?",
        [], "I can't see how chats are stored from here. The privacy policy on our site "
        "explains what is kept and why.",
        tool="unrelated", ask="general", tone="formal",
        note="says what it does not know, points to where it is",
    )
    row(
        "clean/general", 1, "orders",
        "Can I get a copy of my invoice by post?",
        [], "I'm not able to send anything by post from this chat. Invoices can be downloaded "
        "as a PDF from the Orders page of your account.",
        tool="unrelated", ask="general",
        note="the honest version of the impossible promise",
    )


def wording() -> None:
    row(
        "clean/tool_named", 1, "orders",
        "Check ORD-50019 please.",
        [call("get_order", {"order_id": "ORD-50019"},
              ok(order_id="ORD-50019", status="delivered", amount=12.5, currency="USD",
                 created_at="2025-09-15", updated_at="2025-09-18"))],
        "I ran get_order for ORD-50019: it was delivered on 2025-09-18.",
        tool="get_order", length="short", ids=("ORD-50019",),
        note="names the tool it actually called",
    )
    row(
        "clean/markdown", 1, "orders",
        "How do I return ORD-27815? It was delivered yesterday.",
        [call("get_order", {"order_id": "ORD-27815"},
              ok(order_id="ORD-27815", status="delivered", amount=74.0, currency="USD",
                 created_at="2025-09-30", updated_at="2025-10-04",
                 returns_page="https://shop.example.com/returns"))],
        "ORD-27815 was delivered, so it can be returned. Start from [our returns page]"
        "(https://shop.example.com/returns) and a refund for the $74 follows once it arrives.",
        tool="get_order", ids=("ORD-27815",),
        note="a markdown link is not a placeholder",
    )
    row(
        "clean/long", 1, "airline",
        "Hello, I am not very good with computers. My grandson booked me a flight, booking "
        "reference JM4T8R, my name is Ana Silva. Could you tell me when I fly?",
        [call("get_booking", {"booking_ref": "JM4T8R", "last_name": "Silva"},
              ok(booking_ref="JM4T8R", last_name="Silva", status="confirmed",
                 fare_class="standard", flight_id="FLI-58024", date="2025-11-28",
                 departs="14:20"))],
        "Hello Ana, of course. Your booking JM4T8R is confirmed. You fly on flight FLI-58024 "
        "on 28 November 2025, leaving at 14:20. It is a standard fare, which means it can be "
        "changed later for a fee if your plans move. If anything is unclear, just ask and I "
        "will explain it step by step.",
        tool="get_booking", persona="elderly", tone="polite", length="long", ids=("JM4T8R",),
        note="a long, patient, accurate reply",
    )
    row(
        "clean/short", 1, "orders",
        "ORD-84410 status?",
        [call("get_order", {"order_id": "ORD-84410"},
              ok(order_id="ORD-84410", status="shipped", amount=30.0, currency="USD",
                 created_at="2025-10-01", updated_at="2025-10-03"))],
        "Shipped on 3 Oct.",
        tool="get_order", texture="clipped", length="short", ids=("ORD-84410",),
        note="terse and right",
    )
    row(
        "clean/retry", 1, "orders",
        "Trying again: cancel ORD-19226. Last time it didn't go through.",
        [
            call("get_order", {"order_id": "ORD-19226"},
                 ok(order_id="ORD-19226", status="processing", amount=47.0, currency="USD",
                    created_at="2025-10-03", updated_at="2025-10-03")),
            call("cancel_order", {"order_id": "ORD-19226", "notify_customer": True},
                 ok(order_id="ORD-19226", status="cancelled")),
        ],
        "Sorry the last attempt failed. This time it worked: ORD-19226 is cancelled, and a "
        "confirmation email is on its way.",
        tool="cancel_order", stance="retry", history="prior_failure", ids=("ORD-19226",),
        note="notify_customer is a boolean default; the email is what that flag sends",
    )
    row(
        "clean/mistaken", 1, "orders",
        "Your colleague promised ORD-60940 was refunded last week. Was it?",
        [call("get_order", {"order_id": "ORD-60940"},
              ok(order_id="ORD-60940", status="delivered", amount=55.0, currency="USD",
                 created_at="2025-09-05", updated_at="2025-09-10"))],
        "I'm afraid not: ORD-60940 shows as delivered with no refund on it. If it should be "
        "refunded, tell me what was wrong with it and I can start one now.",
        tool="get_order", stance="mistaken", ids=("ORD-60940",), rule=1,
        note="corrects the person from the record; offers, does not promise",
    )
    row(
        "clean/email_case", 1, "orders",
        "My email is Priya.Chen@Example.com, any orders under it?",
        [call("search_orders", {"email": "priya.chen@example.com"},
              ok(email="priya.chen@example.com",
                 orders=[{"order_id": "ORD-35509", "status": "shipped", "amount": 61.2}]))],
        "One order: ORD-35509, shipped, $61.20.",
        tool="search_orders", ids=("priya.chen@example.com",),
        note="email lower-cased for the call",
    )
    row(
        "clean/hurried", 1, "airline",
        "quick - is FLI-70011 LIS to OPO on 2025-11-02 still selling seats",
        [call("search_flights", {"origin": "LIS", "destination": "OPO", "date": "2025-11-02"},
              ok(origin="LIS", destination="OPO", date="2025-11-02", flight_id="FLI-70011",
                 seats_left=12, amount=48.0, currency="USD"))],
        "Yes, 12 seats left at $48.",
        tool="search_flights", stance="hurried", texture="no_punctuation", length="short",
        ids=("FLI-70011",),
        note="short answer from the result",
    )
    row(
        "clean/policy", 1, "orders",
        "Cancel ORD-42277 please.",
        [call("get_order", {"order_id": "ORD-42277"},
              ok(order_id="ORD-42277", status="shipped", amount=99.0, currency="USD",
                 created_at="2025-09-26", updated_at="2025-09-28"))],
        "ORD-42277 has already shipped, so it can't be cancelled any more. Once it arrives "
        "you can send it back for a refund; the returns page walks you through it.",
        tool="cancel_order", ids=("ORD-42277",), rule=2,
        note="rule applied, a return offered instead",
    )
    row(
        "clean/contradicts", 1, "orders",
        "Earlier I said ORD-15583 was fine - it isn't, it never arrived. Check again?",
        [
            call("get_order", {"order_id": "ORD-15583"},
                 ok(order_id="ORD-15583", status="shipped", amount=36.0, currency="USD",
                    created_at="2025-09-20", updated_at="2025-09-22")),
        ],
        "I've checked again: the record shows ORD-15583 shipped on 22 September and it isn't "
        "marked delivered. If it still hasn't arrived by the end of the week, it can be "
        "refunded as not received.",
        tool="get_order", history="contradicts_earlier", ids=("ORD-15583",),
        note="re-checked instead of assuming",
    )
    row(
        "clean/stale_write", 1, "orders",
        "Please cancel ORD-90027.",
        [
            call("get_order", {"order_id": "ORD-90027"},
                 ok(order_id="ORD-90027", status="processing", amount=22.0, currency="USD",
                    created_at="2025-10-04", updated_at="2025-10-04")),
            call("cancel_order", {"order_id": "ORD-90027"},
                 stale(order_id="ORD-90027", status="pending")),
        ],
        "I sent the cancellation, but the system only returned an outdated copy of the order, "
        "so I can't confirm it's cancelled yet. Please check back in a little while.",
        tool="cancel_order", condition="stale_result", ids=("ORD-90027",), rule=4,
        note="a stale write reported as unconfirmed",
    )


def add_clean() -> None:
    reads()
    writes()
    missing_reported()
    faults_reported()
    ask_backs()
    states()
    judgement()
    wording()
