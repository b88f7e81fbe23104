from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.explain_body import ExplainBody
from ...models.explain_result import ExplainResult
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    *,
    body: ExplainBody,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/placement/explain",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ExplainResult | Problem | None:
    if response.status_code == 200:
        response_200 = ExplainResult.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ExplainResult | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: ExplainBody,

) -> Response[ExplainResult | Problem]:
    """ Where would this VM go, and why not elsewhere? Creates nothing.

     Deprecated alias of `POST /v1/placement/explain` (`explainPlacement`), for one release.

    Args:
        body (ExplainBody): The placement input, with hosts inline or taken from a configured
            inventory.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ExplainResult | Problem]
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
    body: ExplainBody,

) -> ExplainResult | Problem | None:
    """ Where would this VM go, and why not elsewhere? Creates nothing.

     Deprecated alias of `POST /v1/placement/explain` (`explainPlacement`), for one release.

    Args:
        body (ExplainBody): The placement input, with hosts inline or taken from a configured
            inventory.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ExplainResult | Problem
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: ExplainBody,

) -> Response[ExplainResult | Problem]:
    """ Where would this VM go, and why not elsewhere? Creates nothing.

     Deprecated alias of `POST /v1/placement/explain` (`explainPlacement`), for one release.

    Args:
        body (ExplainBody): The placement input, with hosts inline or taken from a configured
            inventory.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ExplainResult | Problem]
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
    body: ExplainBody,

) -> ExplainResult | Problem | None:
    """ Where would this VM go, and why not elsewhere? Creates nothing.

     Deprecated alias of `POST /v1/placement/explain` (`explainPlacement`), for one release.

    Args:
        body (ExplainBody): The placement input, with hosts inline or taken from a configured
            inventory.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ExplainResult | Problem
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
