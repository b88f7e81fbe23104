from enum import StrEnum

class Phase(StrEnum):
    CANCELLED = "cancelled"
    COMPENSATING = "compensating"
    CREATING_VM = "creating_vm"
    FAILED = "failed"
    READY = "ready"
    RELEASED = "released"
    RELEASING = "releasing"
    RESERVING = "reserving"
    VALIDATING = "validating"
    WAITING_CAPACITY = "waiting_capacity"
    WAITING_READY = "waiting_ready"

    def __str__(self) -> str:
        return str(self.value)
