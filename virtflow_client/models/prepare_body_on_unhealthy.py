from enum import StrEnum

class PrepareBodyOnUnhealthy(StrEnum):
    NOTIFY = "notify"
    RELEASE = "release"
    REPLACE = "replace"

    def __str__(self) -> str:
        return str(self.value)
