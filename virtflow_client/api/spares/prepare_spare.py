from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.prepare_accepted import PrepareAccepted
from ...models.prepare_body import PrepareBody
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    *,
    body: PrepareBody,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/spares",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> PrepareAccepted | Problem | None:
    if response.status_code == 202:
        response_202 = PrepareAccepted.from_dict(response.json())



        return response_202

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[PrepareAccepted | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: PrepareBody,

) -> Response[PrepareAccepted | Problem]:
    """ Ask for a spare node

     Starts the PrepareSpare workflow with id `spare-<cluster>-<request_id>`. A request_id names exactly
    one spare, ever: the same body again answers with the same spare, running or ended (id conflict
    policy USE_EXISTING, id reuse policy REJECT_DUPLICATE: an ended spare is never started again; ask
    with a new request_id); a different body reusing the request_id answers 409 `request_conflict`. With
    `count` > 1 the spares have ids `spare-<cluster>-<request_id>-<i>` and form one group
    (`anti_affinity_group`, default the request_id): anti-affinity and every `topology_spread`
    constraint count them, each member placed with the members before it counted. `near` names the VM or
    the Node being replaced; one the inventory does not have is 422 `near_unknown`. A single spare
    (without `wait_for_capacity`) whose time meets a booking's room in an inventory that holds bookings
    is 409 `no_capacity` with `held_by` naming them.

    Args:
        body (PrepareBody): The request of `POST /spare/prepare`: a spare request, `count` times.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PrepareAccepted | Problem]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: PrepareBody,

) -> PrepareAccepted | Problem | None:
    """ Ask for a spare node

     Starts the PrepareSpare workflow with id `spare-<cluster>-<request_id>`. A request_id names exactly
    one spare, ever: the same body again answers with the same spare, running or ended (id conflict
    policy USE_EXISTING, id reuse policy REJECT_DUPLICATE: an ended spare is never started again; ask
    with a new request_id); a different body reusing the request_id answers 409 `request_conflict`. With
    `count` > 1 the spares have ids `spare-<cluster>-<request_id>-<i>` and form one group
    (`anti_affinity_group`, default the request_id): anti-affinity and every `topology_spread`
    constraint count them, each member placed with the members before it counted. `near` names the VM or
    the Node being replaced; one the inventory does not have is 422 `near_unknown`. A single spare
    (without `wait_for_capacity`) whose time meets a booking's room in an inventory that holds bookings
    is 409 `no_capacity` with `held_by` naming them.

    Args:
        body (PrepareBody): The request of `POST /spare/prepare`: a spare request, `count` times.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PrepareAccepted | Problem
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: PrepareBody,

) -> Response[PrepareAccepted | Problem]:
    """ Ask for a spare node

     Starts the PrepareSpare workflow with id `spare-<cluster>-<request_id>`. A request_id names exactly
    one spare, ever: the same body again answers with the same spare, running or ended (id conflict
    policy USE_EXISTING, id reuse policy REJECT_DUPLICATE: an ended spare is never started again; ask
    with a new request_id); a different body reusing the request_id answers 409 `request_conflict`. With
    `count` > 1 the spares have ids `spare-<cluster>-<request_id>-<i>` and form one group
    (`anti_affinity_group`, default the request_id): anti-affinity and every `topology_spread`
    constraint count them, each member placed with the members before it counted. `near` names the VM or
    the Node being replaced; one the inventory does not have is 422 `near_unknown`. A single spare
    (without `wait_for_capacity`) whose time meets a booking's room in an inventory that holds bookings
    is 409 `no_capacity` with `held_by` naming them.

    Args:
        body (PrepareBody): The request of `POST /spare/prepare`: a spare request, `count` times.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PrepareAccepted | Problem]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: PrepareBody,

) -> PrepareAccepted | Problem | None:
    """ Ask for a spare node

     Starts the PrepareSpare workflow with id `spare-<cluster>-<request_id>`. A request_id names exactly
    one spare, ever: the same body again answers with the same spare, running or ended (id conflict
    policy USE_EXISTING, id reuse policy REJECT_DUPLICATE: an ended spare is never started again; ask
    with a new request_id); a different body reusing the request_id answers 409 `request_conflict`. With
    `count` > 1 the spares have ids `spare-<cluster>-<request_id>-<i>` and form one group
    (`anti_affinity_group`, default the request_id): anti-affinity and every `topology_spread`
    constraint count them, each member placed with the members before it counted. `near` names the VM or
    the Node being replaced; one the inventory does not have is 422 `near_unknown`. A single spare
    (without `wait_for_capacity`) whose time meets a booking's room in an inventory that holds bookings
    is 409 `no_capacity` with `held_by` naming them.

    Args:
        body (PrepareBody): The request of `POST /spare/prepare`: a spare request, `count` times.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PrepareAccepted | Problem
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
