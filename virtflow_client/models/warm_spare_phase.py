from enum import StrEnum

class WarmSparePhase(StrEnum):
    CLAIMED = "claimed"
    COMING_UP = "coming_up"
    LEAVING = "leaving"
    WARM = "warm"

    def __str__(self) -> str:
        return str(self.value)
