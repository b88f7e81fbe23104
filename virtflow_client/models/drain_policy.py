from enum import StrEnum

class DrainPolicy(StrEnum):
    FAIL = "fail"
    FORCE = "force"
    LEAVE = "leave"

    def __str__(self) -> str:
        return str(self.value)
