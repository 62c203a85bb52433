"""The PostgreSQL channel layer: two layers stand for two web processes sharing one database."""

import asyncio
import contextlib

import pytest
from asgiref.sync import async_to_sync

from memory_project.pg_layer import PART_CHARS, PostgresChannelLayer

pytestmark = pytest.mark.django_db(transaction=True)


async def _receive(layer, channel, timeout=5.0):
    return await asyncio.wait_for(layer.receive(channel), timeout)


async def _nothing(layer, channel, wait=0.3):
    try:
        return await asyncio.wait_for(layer.receive(channel), wait)
    except TimeoutError:
        return None


@contextlib.asynccontextmanager
async def _member_in_each_process(group: str):
    """Two layers (two web processes), each with a member of `group`: (here, there, mine, theirs)."""
    here, there = PostgresChannelLayer(), PostgresChannelLayer()
    try:
        mine, theirs = await here.new_channel(), await there.new_channel()
        await here.group_add(group, mine)
        await there.group_add(group, theirs)
        yield here, there, mine, theirs
    finally:
        await here.close()
        await there.close()


def test_a_group_message_reaches_members_in_both_processes_once_each():
    async def scenario():
        async with _member_in_each_process("events.owner.7") as (here, there, mine, theirs):
            await here.group_send("events.owner.7", {"type": "event.message", "n": 1})
            return (
                await _receive(here, mine),
                await _receive(there, theirs),
                await _nothing(here, mine),
                await _nothing(there, theirs),
            )

    got_here, got_there, again_here, again_there = async_to_sync(scenario)()

    assert got_here == {"type": "event.message", "n": 1}
    assert got_there == {"type": "event.message", "n": 1}
    assert (again_here, again_there) == (None, None)


def test_a_message_longer_than_a_notification_arrives_whole_and_other_groups_get_nothing():
    big = "é" * (PART_CHARS * 3)  # several NOTIFY payloads once packed and encoded

    async def scenario():
        here, there = PostgresChannelLayer(), PostgresChannelLayer()
        try:
            member, outsider = await there.new_channel(), await there.new_channel()
            await there.group_add("events.owner.1", member)
            await there.group_add("events.owner.2", outsider)
            await here.group_send("events.owner.1", {"type": "event.message", "text": big})
            return await _receive(there, member), await _nothing(there, outsider)
        finally:
            await here.close()
            await there.close()

    received, other = async_to_sync(scenario)()

    assert received == {"type": "event.message", "text": big}
    assert other is None


def test_a_message_for_a_channel_of_another_process_is_delivered_there_only():
    async def scenario():
        here, there = PostgresChannelLayer(), PostgresChannelLayer()
        try:
            theirs = await there.new_channel()
            await there.group_add("events.staff", theirs)  # starts its listener
            await here.send(theirs, {"type": "websocket.close", "code": 4401})
            return await _receive(there, theirs), here.channels
        finally:
            await here.close()
            await there.close()

    received, local_queues = async_to_sync(scenario)()

    assert received == {"type": "websocket.close", "code": 4401}
    assert local_queues == {}


def test_a_process_that_listens_nowhere_still_delivers_to_its_own_members_at_once():
    # given one layer (one process), which has no other process to hear from
    layer = PostgresChannelLayer()

    async def scenario():
        try:
            channel = await layer.new_channel()
            await layer.group_add("events.owner.3", channel)
            await layer.group_send("events.owner.3", {"type": "event.message", "n": 3})
            # delivered before group_send returned, not on the way back from the database
            return layer.channels[channel].qsize(), await _receive(layer, channel), await _nothing(layer, channel)
        finally:
            await layer.close()

    queued, received, duplicate = async_to_sync(scenario)()

    assert queued == 1
    assert received == {"type": "event.message", "n": 3}
    assert duplicate is None


def test_a_synchronous_send_returns_at_once_and_reaches_both_processes_in_order():
    # given two processes' layers with a member of one group each, and this process's loop running
    async def scenario():
        async with _member_in_each_process("events.owner.9") as (here, there, mine, theirs):
            # when synchronous code sends a burst of messages while it holds up this process's loop
            for n in range(50):
                here.group_send_soon("events.owner.9", {"type": "event.message", "n": n})
            queued_when_returned = here.channels[mine].qsize() if mine in here.channels else 0
            got_here = [(await _receive(here, mine))["n"] for _ in range(50)]
            got_there = [(await _receive(there, theirs))["n"] for _ in range(50)]
            return queued_when_returned, got_here, got_there, await _nothing(there, theirs)

    queued, got_here, got_there, more = async_to_sync(scenario)()

    # then it never waited for the loop (nothing was delivered before it let the loop run), and both
    # processes got every message once, in order
    assert queued == 0
    assert got_here == list(range(50))
    assert got_there == list(range(50))
    assert more is None
