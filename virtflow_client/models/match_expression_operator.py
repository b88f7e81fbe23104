from enum import StrEnum

class MatchExpressionOperator(StrEnum):
    DOESNOTEXIST = "DoesNotExist"
    EXISTS = "Exists"
    GT = "Gt"
    IN = "In"
    LT = "Lt"
    NOTIN = "NotIn"

    def __str__(self) -> str:
        return str(self.value)
