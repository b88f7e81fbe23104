from enum import StrEnum

class Phase(StrEnum):
    BOOKED = "booked"
    CANCELLED = "cancelled"
    COMPENSATING = "compensating"
    CREATING_VM = "creating_vm"
    FAILED = "failed"
    HANDED_OVER = "handed_over"
    READY = "ready"
    RELEASED = "released"
    RELEASING = "releasing"
    RESERVING = "reserving"
    VALIDATING = "validating"
    WAITING_CAPACITY = "waiting_capacity"
    WAITING_READY = "waiting_ready"
    WARM = "warm"

    def __str__(self) -> str:
        return str(self.value)
