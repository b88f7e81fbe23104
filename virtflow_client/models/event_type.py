from enum import StrEnum

class EventType(StrEnum):
    BOOKING_MOVED = "booking.moved"
    BOOKING_REHEARSAL_FAILED = "booking.rehearsal_failed"
    SPARE_FAILED = "spare.failed"
    SPARE_READY = "spare.ready"
    SPARE_RELEASED = "spare.released"
    SPARE_RELEASE_STARTED = "spare.release_started"
    SPARE_REPLACED = "spare.replaced"
    SPARE_RESERVED = "spare.reserved"
    SPARE_UNHEALTHY = "spare.unhealthy"
    SPARE_VM_CREATED = "spare.vm_created"
    SPARE_WINDOW_ENDING = "spare.window_ending"
    WARM_POOL_SHORT = "warm_pool.short"

    def __str__(self) -> str:
        return str(self.value)
