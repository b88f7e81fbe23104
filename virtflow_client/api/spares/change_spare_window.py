from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.window_body import WindowBody
from ...models.window_changed import WindowChanged
from typing import cast



def _get_kwargs(
    spare_id: str,
    *,
    body: WindowBody,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "patch",
        "url": "/v1/spares/{spare_id}/window".format(spare_id=quote(str(spare_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | WindowChanged | None:
    if response.status_code == 200:
        response_200 = WindowChanged.from_dict(response.json())



        return response_200

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | WindowChanged]:
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
    body: WindowBody,

) -> Response[Problem | WindowChanged]:
    """ End a booking's window later or sooner

     The window's start stays; its end moves, and the room it holds, its hold's timer and
    `spare.window_ending` with it. A sooner end is always taken; a later one if the inventory's ledger,
    deciding under its lock, finds the host's room free until then: otherwise 409 `no_capacity` with
    `held_by` (the spares of its cluster holding the room), `free_until` (the latest end it allows now)
    and `free_again_at` (when it is free again), and nothing changed. 422 naming `end`:
    `window_end_passed` (not in the future), `invalid_request` (not after the window's start),
    `window_too_far` (more than `booking_horizon_days` ahead). A spare without a window: 409
    `not_a_booking`; released or being released: 409 `already_released`. A release (`POST .../release`)
    ends a Ready booking before its end.

    Args:
        spare_id (str):
        body (WindowBody): The window's new end (RFC 3339 with an offset); its start stays.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WindowChanged]
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
    body: WindowBody,

) -> Problem | WindowChanged | None:
    """ End a booking's window later or sooner

     The window's start stays; its end moves, and the room it holds, its hold's timer and
    `spare.window_ending` with it. A sooner end is always taken; a later one if the inventory's ledger,
    deciding under its lock, finds the host's room free until then: otherwise 409 `no_capacity` with
    `held_by` (the spares of its cluster holding the room), `free_until` (the latest end it allows now)
    and `free_again_at` (when it is free again), and nothing changed. 422 naming `end`:
    `window_end_passed` (not in the future), `invalid_request` (not after the window's start),
    `window_too_far` (more than `booking_horizon_days` ahead). A spare without a window: 409
    `not_a_booking`; released or being released: 409 `already_released`. A release (`POST .../release`)
    ends a Ready booking before its end.

    Args:
        spare_id (str):
        body (WindowBody): The window's new end (RFC 3339 with an offset); its start stays.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WindowChanged
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
    body: WindowBody,

) -> Response[Problem | WindowChanged]:
    """ End a booking's window later or sooner

     The window's start stays; its end moves, and the room it holds, its hold's timer and
    `spare.window_ending` with it. A sooner end is always taken; a later one if the inventory's ledger,
    deciding under its lock, finds the host's room free until then: otherwise 409 `no_capacity` with
    `held_by` (the spares of its cluster holding the room), `free_until` (the latest end it allows now)
    and `free_again_at` (when it is free again), and nothing changed. 422 naming `end`:
    `window_end_passed` (not in the future), `invalid_request` (not after the window's start),
    `window_too_far` (more than `booking_horizon_days` ahead). A spare without a window: 409
    `not_a_booking`; released or being released: 409 `already_released`. A release (`POST .../release`)
    ends a Ready booking before its end.

    Args:
        spare_id (str):
        body (WindowBody): The window's new end (RFC 3339 with an offset); its start stays.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | WindowChanged]
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
    body: WindowBody,

) -> Problem | WindowChanged | None:
    """ End a booking's window later or sooner

     The window's start stays; its end moves, and the room it holds, its hold's timer and
    `spare.window_ending` with it. A sooner end is always taken; a later one if the inventory's ledger,
    deciding under its lock, finds the host's room free until then: otherwise 409 `no_capacity` with
    `held_by` (the spares of its cluster holding the room), `free_until` (the latest end it allows now)
    and `free_again_at` (when it is free again), and nothing changed. 422 naming `end`:
    `window_end_passed` (not in the future), `invalid_request` (not after the window's start),
    `window_too_far` (more than `booking_horizon_days` ahead). A spare without a window: 409
    `not_a_booking`; released or being released: 409 `already_released`. A release (`POST .../release`)
    ends a Ready booking before its end.

    Args:
        spare_id (str):
        body (WindowBody): The window's new end (RFC 3339 with an offset); its start stays.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | WindowChanged
     """


    return (await asyncio_detailed(
        spare_id=spare_id,
client=client,
body=body,

    )).parsed
