from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.bookings_view import BookingsView
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    from_: None | str | Unset = UNSET,
    to: None | str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_from_: None | str | Unset
    if isinstance(from_, Unset):
        json_from_ = UNSET
    else:
        json_from_ = from_
    params["from"] = json_from_

    json_to: None | str | Unset
    if isinstance(to, Unset):
        json_to = UNSET
    else:
        json_to = to
    params["to"] = json_to


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/bookings",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> BookingsView | Problem | None:
    if response.status_code == 200:
        response_200 = BookingsView.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[BookingsView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    from_: None | str | Unset = UNSET,
    to: None | str | Unset = UNSET,

) -> Response[BookingsView | Problem]:
    """ Each host's bookings over [from, to): spare, cluster, window, lead start, phase

    Args:
        from_ (None | str | Unset): RFC 3339 with an offset; default now
        to (None | str | Unset): RFC 3339 with an offset, after `from`; default: `from` plus
            booking_horizon_days plus 31 days (also the longest span)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BookingsView | Problem]
     """


    kwargs = _get_kwargs(
        from_=from_,
to=to,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    from_: None | str | Unset = UNSET,
    to: None | str | Unset = UNSET,

) -> BookingsView | Problem | None:
    """ Each host's bookings over [from, to): spare, cluster, window, lead start, phase

    Args:
        from_ (None | str | Unset): RFC 3339 with an offset; default now
        to (None | str | Unset): RFC 3339 with an offset, after `from`; default: `from` plus
            booking_horizon_days plus 31 days (also the longest span)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BookingsView | Problem
     """


    return sync_detailed(
        client=client,
from_=from_,
to=to,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    from_: None | str | Unset = UNSET,
    to: None | str | Unset = UNSET,

) -> Response[BookingsView | Problem]:
    """ Each host's bookings over [from, to): spare, cluster, window, lead start, phase

    Args:
        from_ (None | str | Unset): RFC 3339 with an offset; default now
        to (None | str | Unset): RFC 3339 with an offset, after `from`; default: `from` plus
            booking_horizon_days plus 31 days (also the longest span)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[BookingsView | Problem]
     """


    kwargs = _get_kwargs(
        from_=from_,
to=to,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    from_: None | str | Unset = UNSET,
    to: None | str | Unset = UNSET,

) -> BookingsView | Problem | None:
    """ Each host's bookings over [from, to): spare, cluster, window, lead start, phase

    Args:
        from_ (None | str | Unset): RFC 3339 with an offset; default now
        to (None | str | Unset): RFC 3339 with an offset, after `from`; default: `from` plus
            booking_horizon_days plus 31 days (also the longest span)

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        BookingsView | Problem
     """


    return (await asyncio_detailed(
        client=client,
from_=from_,
to=to,

    )).parsed
