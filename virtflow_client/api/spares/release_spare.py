from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.release_request import ReleaseRequest
from ...models.spare_status import SpareStatus
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    spare_id: str,
    *,
    body: None | ReleaseRequest | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/spares/{spare_id}/release".format(spare_id=quote(str(spare_id), safe=""),),
    }

    
    if isinstance(body, ReleaseRequest):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SpareStatus | None:
    if response.status_code == 202:
        response_202 = SpareStatus.from_dict(response.json())



        return response_202

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if response.status_code == 502:
        response_502 = Problem.from_dict(response.json())



        return response_502

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | SpareStatus]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    spare_id: str,
    *,
    client: AuthenticatedClient,
    body: None | ReleaseRequest | Unset = UNSET,

) -> Response[Problem | SpareStatus]:
    """ Release a Ready spare (cordon, drain, delete the Node, destroy the VM)

     Accepted once the spare is Ready; answers its status (release takes a while: follow `Location` until
    the phase is `released`). Before Ready: 409 `spare_not_ready`; released or being released: 409
    `already_released`; ended otherwise: 409 `spare_ended`.

    Args:
        spare_id (str):
        body (None | ReleaseRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SpareStatus]
     """


    kwargs = _get_kwargs(
        spare_id=spare_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    spare_id: str,
    *,
    client: AuthenticatedClient,
    body: None | ReleaseRequest | Unset = UNSET,

) -> Problem | SpareStatus | None:
    """ Release a Ready spare (cordon, drain, delete the Node, destroy the VM)

     Accepted once the spare is Ready; answers its status (release takes a while: follow `Location` until
    the phase is `released`). Before Ready: 409 `spare_not_ready`; released or being released: 409
    `already_released`; ended otherwise: 409 `spare_ended`.

    Args:
        spare_id (str):
        body (None | ReleaseRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SpareStatus
     """


    return sync_detailed(
        spare_id=spare_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    spare_id: str,
    *,
    client: AuthenticatedClient,
    body: None | ReleaseRequest | Unset = UNSET,

) -> Response[Problem | SpareStatus]:
    """ Release a Ready spare (cordon, drain, delete the Node, destroy the VM)

     Accepted once the spare is Ready; answers its status (release takes a while: follow `Location` until
    the phase is `released`). Before Ready: 409 `spare_not_ready`; released or being released: 409
    `already_released`; ended otherwise: 409 `spare_ended`.

    Args:
        spare_id (str):
        body (None | ReleaseRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SpareStatus]
     """


    kwargs = _get_kwargs(
        spare_id=spare_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    spare_id: str,
    *,
    client: AuthenticatedClient,
    body: None | ReleaseRequest | Unset = UNSET,

) -> Problem | SpareStatus | None:
    """ Release a Ready spare (cordon, drain, delete the Node, destroy the VM)

     Accepted once the spare is Ready; answers its status (release takes a while: follow `Location` until
    the phase is `released`). Before Ready: 409 `spare_not_ready`; released or being released: 409
    `already_released`; ended otherwise: 409 `spare_ended`.

    Args:
        spare_id (str):
        body (None | ReleaseRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SpareStatus
     """


    return (await asyncio_detailed(
        spare_id=spare_id,
client=client,
body=body,

    )).parsed
