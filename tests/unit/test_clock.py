"""The run's time (dbio/run/clock.py): virtual seconds pass only when the loop would sit idle, in the order its
timers were set, while an executor thread's work takes none and a thread's sleep_blocking waits its turn."""

from __future__ import annotations

import asyncio
import time

import pytest

from dbio.run.clock import REAL_TIME
from tests.virtual_time import VirtualTime


def test_virtual_time_jumps_to_each_timer_in_order_and_takes_no_wall_time():
    clock = VirtualTime()
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await asyncio.sleep(seconds)
        woke.append((name, clock.monotonic() - began))

    async def main() -> None:
        await asyncio.gather(sleeper("late", 30.0), sleeper("early", 10.0), asyncio.wait_for(sleeper("cut", 99), 20))

    began, wall, real = clock.monotonic(), clock.wall(), time.monotonic()
    with pytest.raises(asyncio.TimeoutError):
        clock.run(main())
    assert woke == [("early", pytest.approx(10.0))]  # the timeout at 20 s cancelled the rest
    assert clock.monotonic() - began == pytest.approx(20.0) and clock.wall() - wall == pytest.approx(20.0)
    assert time.monotonic() - real < 5  # 20 virtual seconds, nowhere near that in wall time


def test_a_thread_s_work_takes_no_virtual_time_and_its_sleep_waits_for_the_loop_s_timers():
    clock = VirtualTime()
    order: list[str] = []

    def work() -> float:
        time.sleep(0.2)  # real work (an fsync, a /proc reading): the virtual time waits for it
        at = clock.monotonic()
        clock.sleep_blocking(5.0)  # a thread polling a server: it wakes after the loop's 3 s timer
        order.append("thread")
        return at

    async def timer() -> None:
        await asyncio.sleep(3.0)
        order.append("timer")

    async def main() -> float:
        at, _ = await asyncio.gather(asyncio.to_thread(work), timer())
        return at

    began = clock.monotonic()
    assert clock.run(main()) == began  # the thread's 0.2 s of work took no virtual time
    assert order == ["timer", "thread"] and clock.monotonic() - began == pytest.approx(5.0)


def test_outside_a_run_virtual_time_stands_still_but_for_a_sleep():
    clock = VirtualTime()
    at = clock.monotonic()
    assert clock.monotonic() == at
    clock.sleep_blocking(2.0)
    assert clock.monotonic() == at + 2.0


def test_real_time_is_the_machine_s():
    assert abs(REAL_TIME.wall() - time.time()) < 1 and abs(REAL_TIME.monotonic() - time.monotonic()) < 1
    assert REAL_TIME.run(asyncio.sleep(0, result="done")) == "done"
