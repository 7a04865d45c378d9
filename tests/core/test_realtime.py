"""A real-time node freezes its start-up heap, so later garbage collections stay short."""

import gc
import time

from surrogait_core.runtime.realtime import freeze_startup_objects


def test_objects_alive_after_start_up_are_frozen_out_of_collections():
    heap = [{"a": [i]} for i in range(200_000)]  # stands in for modules, models, ROS and DDS entities
    try:
        frozen = freeze_startup_objects()
        assert frozen >= len(heap) and gc.get_freeze_count() == frozen
        start = time.thread_time()
        gc.collect()
        after_freeze_s = time.thread_time() - start
        gc.unfreeze()
        start = time.thread_time()
        gc.collect()
        unfrozen_s = time.thread_time() - start
        assert after_freeze_s < unfrozen_s / 3, (after_freeze_s, unfrozen_s)
    finally:
        gc.unfreeze()  # this test process goes on to run other tests
        del heap
