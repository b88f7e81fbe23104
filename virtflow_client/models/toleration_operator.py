from enum import StrEnum

class TolerationOperator(StrEnum):
    EQUAL = "Equal"
    EXISTS = "Exists"

    def __str__(self) -> str:
        return str(self.value)
