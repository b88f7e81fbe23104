from enum import StrEnum

class TolerationEffectType0(StrEnum):
    NOEXECUTE = "NoExecute"
    NOSCHEDULE = "NoSchedule"
    PREFERNOSCHEDULE = "PreferNoSchedule"

    def __str__(self) -> str:
        return str(self.value)
