"""A workflow whose input, result, failure message and search attribute name one host: what
the encryption test looks for in a history (its own module, so the sandbox imports little)."""

from __future__ import annotations

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ApplicationError

HOST_KEY = SearchAttributeKey.for_keyword("VirtflowHost")


class Note(BaseModel):
    host: str
    message: str


@workflow.defn(name="EncryptedEcho")
class EncryptedEcho:
    @workflow.run
    async def run(self, note: Note) -> Note:
        workflow.upsert_search_attributes([HOST_KEY.value_set(note.host)])
        if note.message == "fail":
            raise ApplicationError(f"could not reach {note.host}", non_retryable=True)
        return note
