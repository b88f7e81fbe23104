from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.phase import Phase
from ...models.problem import Problem
from ...models.spare_page import SparePage
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    cluster: None | str | Unset = UNSET,
    pool: None | str | Unset = UNSET,
    host: None | str | Unset = UNSET,
    phase: None | Phase | Unset = UNSET,
    page_size: int | Unset = 100,
    page_token: None | str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_cluster: None | str | Unset
    if isinstance(cluster, Unset):
        json_cluster = UNSET
    else:
        json_cluster = cluster
    params["cluster"] = json_cluster

    json_pool: None | str | Unset
    if isinstance(pool, Unset):
        json_pool = UNSET
    else:
        json_pool = pool
    params["pool"] = json_pool

    json_host: None | str | Unset
    if isinstance(host, Unset):
        json_host = UNSET
    else:
        json_host = host
    params["host"] = json_host

    json_phase: None | str | Unset
    if isinstance(phase, Unset):
        json_phase = UNSET
    elif isinstance(phase, Phase):
        json_phase = phase.value
    else:
        json_phase = phase
    params["phase"] = json_phase

    params["page_size"] = page_size

    json_page_token: None | str | Unset
    if isinstance(page_token, Unset):
        json_page_token = UNSET
    else:
        json_page_token = page_token
    params["page_token"] = json_page_token


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/spares",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | SparePage | None:
    if response.status_code == 200:
        response_200 = SparePage.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | SparePage]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    cluster: None | str | Unset = UNSET,
    pool: None | str | Unset = UNSET,
    host: None | str | Unset = UNSET,
    phase: None | Phase | Unset = UNSET,
    page_size: int | Unset = 100,
    page_token: None | str | Unset = UNSET,

) -> Response[Problem | SparePage]:
    """ List spares by cluster, pool, host and phase (Temporal visibility), newest first

     Deprecated alias of `GET /v1/spares` (`listSpares`), for one release.

    Args:
        cluster (None | str | Unset):
        pool (None | str | Unset):
        host (None | str | Unset):
        phase (None | Phase | Unset):
        page_size (int | Unset):  Default: 100.
        page_token (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SparePage]
     """


    kwargs = _get_kwargs(
        cluster=cluster,
pool=pool,
host=host,
phase=phase,
page_size=page_size,
page_token=page_token,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    cluster: None | str | Unset = UNSET,
    pool: None | str | Unset = UNSET,
    host: None | str | Unset = UNSET,
    phase: None | Phase | Unset = UNSET,
    page_size: int | Unset = 100,
    page_token: None | str | Unset = UNSET,

) -> Problem | SparePage | None:
    """ List spares by cluster, pool, host and phase (Temporal visibility), newest first

     Deprecated alias of `GET /v1/spares` (`listSpares`), for one release.

    Args:
        cluster (None | str | Unset):
        pool (None | str | Unset):
        host (None | str | Unset):
        phase (None | Phase | Unset):
        page_size (int | Unset):  Default: 100.
        page_token (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SparePage
     """


    return sync_detailed(
        client=client,
cluster=cluster,
pool=pool,
host=host,
phase=phase,
page_size=page_size,
page_token=page_token,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    cluster: None | str | Unset = UNSET,
    pool: None | str | Unset = UNSET,
    host: None | str | Unset = UNSET,
    phase: None | Phase | Unset = UNSET,
    page_size: int | Unset = 100,
    page_token: None | str | Unset = UNSET,

) -> Response[Problem | SparePage]:
    """ List spares by cluster, pool, host and phase (Temporal visibility), newest first

     Deprecated alias of `GET /v1/spares` (`listSpares`), for one release.

    Args:
        cluster (None | str | Unset):
        pool (None | str | Unset):
        host (None | str | Unset):
        phase (None | Phase | Unset):
        page_size (int | Unset):  Default: 100.
        page_token (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SparePage]
     """


    kwargs = _get_kwargs(
        cluster=cluster,
pool=pool,
host=host,
phase=phase,
page_size=page_size,
page_token=page_token,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    cluster: None | str | Unset = UNSET,
    pool: None | str | Unset = UNSET,
    host: None | str | Unset = UNSET,
    phase: None | Phase | Unset = UNSET,
    page_size: int | Unset = 100,
    page_token: None | str | Unset = UNSET,

) -> Problem | SparePage | None:
    """ List spares by cluster, pool, host and phase (Temporal visibility), newest first

     Deprecated alias of `GET /v1/spares` (`listSpares`), for one release.

    Args:
        cluster (None | str | Unset):
        pool (None | str | Unset):
        host (None | str | Unset):
        phase (None | Phase | Unset):
        page_size (int | Unset):  Default: 100.
        page_token (None | str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SparePage
     """


    return (await asyncio_detailed(
        client=client,
cluster=cluster,
pool=pool,
host=host,
phase=phase,
page_size=page_size,
page_token=page_token,

    )).parsed
