"""An app's integration tests against ringd, with pytest and websockets:
only the public protocol (docs/PROTOCOL.md) and the test API
(docs/TEST-API.md). Run: .venv/bin/python -m pytest examples/python"""

import asyncio


def test_every_device_rings_and_stops_when_one_answers(ringd, device):
    async def scenario():
        async with device("alice", "laptop") as alice, device("bob", "phone") as phone, \
                device("bob", "tablet") as tablet:
            started = await alice.request("initiateCall", receiverId="bob", callType="video")
            assert started["ok"] and started["data"]["ringing"] == 2
            session = started["data"]["call"]["sessionId"]
            assert (await phone.next_event())["status"] == "initiated"
            assert (await tablet.next_event())["status"] == "initiated"

            accepted = await phone.request("acceptCall", sessionId=session)
            assert accepted["data"]["call"]["acceptedBy"] == "phone"
            assert (await alice.next_event())["status"] == "ongoing"  # the same session id
            assert (await tablet.next_event())["status"] == "ongoing"  # stops ringing

    asyncio.run(scenario())


def test_an_unanswered_call_times_out_on_the_manual_clock(ringd, device):
    async def scenario():
        async with device("alice", "laptop") as alice, device("bob", "phone") as bob:
            ringd.manual_clock()
            started = await alice.request("initiateCall", receiverId="bob", callType="audio")
            call = started["data"]["call"]
            assert (await bob.next_event())["status"] == "initiated"

            assert ringd.advance(45_000) == 1  # 45 s of ringing, in milliseconds of wall time
            for side in (alice, bob):
                ended = await side.next_event()
                assert ended["status"] == "unanswered" and ended["endReason"] == "timeout"
                assert ended["endedAt"] == call["initiatedAt"] + 45_000
            logs = await bob.request("getCallLogs")
            assert logs["data"]["logs"][0]["missed"] is True

    asyncio.run(scenario())


def test_the_tap_shows_who_was_told_what(ringd, device):
    async def scenario():
        async with device("alice", "laptop") as alice, device("bob", "phone") as bob:
            started = await alice.request("initiateCall", receiverId="bob", callType="audio")
            session = started["data"]["call"]["sessionId"]
            cancelled = await alice.request("cancelCall", sessionId=session)
            assert cancelled["ok"]
            # By the time alice has her result, the tap holds the transition that told bob's phone.
            cancel = ringd.transitions(session)[-1]
            assert cancel["input"]["request"] == "cancelCall"
            assert cancel["changes"][0]["before"]["status"] == "initiated"
            assert cancel["changes"][0]["after"]["status"] == "cancelled"
            told = [a for a in cancel["actions"] if a["type"] == "event"]
            assert told[0]["to"] == [{"uid": "bob", "deviceId": "phone"}]
            assert (await bob.next_event())["status"] == "initiated"
            assert (await bob.next_event())["status"] == "cancelled"

    asyncio.run(scenario())


def test_a_callee_who_drops_and_comes_back_within_the_grace_keeps_the_call(ringd, device):
    async def scenario():
        async with device("alice", "laptop") as alice, device("bob", "phone") as bob:
            ringd.manual_clock()
            started = await alice.request("initiateCall", receiverId="bob", callType="audio")
            session = started["data"]["call"]["sessionId"]
            await bob.request("acceptCall", sessionId=session)
            ringd.api("POST", "/v1/test/devices/bob/phone/drop")  # a TCP reset, no close frame
            async with device("bob", "phone") as back:
                ringd.advance(10_000)  # the reconnect grace
                active = await back.request("getActiveCall")
                assert active["data"]["call"]["status"] == "ongoing"

    asyncio.run(scenario())


def test_reset_left_nothing_of_the_tests_before(ringd, device):
    async def scenario():
        async with device("alice", "laptop") as alice:
            logs = await alice.request("getCallLogs")
            assert logs["data"]["logs"] == []

    asyncio.run(scenario())
