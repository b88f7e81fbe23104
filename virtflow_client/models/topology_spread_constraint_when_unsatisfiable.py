from enum import StrEnum

class TopologySpreadConstraintWhenUnsatisfiable(StrEnum):
    DONOTSCHEDULE = "DoNotSchedule"
    SCHEDULEANYWAY = "ScheduleAnyway"

    def __str__(self) -> str:
        return str(self.value)
