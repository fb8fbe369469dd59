"""An MCP server protected by the official Python SDK's OAuth server (mcp 2.x), a test peer.

The SDK serves everything an MCP client meets: protected-resource metadata, authorization
server metadata, dynamic client registration, the authorization and token endpoints (PKCE,
refresh tokens) and the bearer-token check with its WWW-Authenticate challenge. What an
application supplies is storage and the user's approval; here storage is in memory and the
user approves at once (the authorization endpoint redirects straight back with a code), so a
client's browser can be a program that follows redirects.

Usage (with peers/.venv/bin/python):
  mcp_py_auth_server.py --port 8123 [--token-ttl SECONDS]
The MCP endpoint is http://127.0.0.1:PORT/mcp; access tokens expire after --token-ttl seconds
(default 3600) and come with a refresh token. The `issued` tool reports how many access tokens
were issued by each grant, so a client test can see a refresh happen.
"""

import argparse
import secrets
import time

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class ApprovingProvider:
    """In-memory storage; every authorization request is approved at once."""

    def __init__(self, token_ttl: int, resource: str):
        self.token_ttl = token_ttl
        self.resource = resource
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.access_tokens: dict[str, AccessToken] = {}
        self.issued = {"authorization_code": 0, "refresh_token": 0}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code: str):
        code = self.codes.get(authorization_code)
        return code if code and code.client_id == client.client_id else None

    async def exchange_authorization_code(self, client, authorization_code) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.issued["authorization_code"] += 1
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token: str):
        token = self.refresh_tokens.get(refresh_token)
        return token if token and token.client_id == client.client_id else None

    async def exchange_refresh_token(self, client, refresh_token, scopes) -> OAuthToken:
        self.refresh_tokens.pop(refresh_token.token, None)
        self.issued["refresh_token"] += 1
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        access = self.access_tokens.get(token)
        if access is None or (access.expires_at is not None and access.expires_at < time.time()):
            return None
        return access

    async def revoke_token(self, token) -> None:
        self.access_tokens.pop(token.token, None)
        self.refresh_tokens.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access = secrets.token_urlsafe(24)
        refresh = secrets.token_urlsafe(24)
        expires_at = int(time.time()) + self.token_ttl
        self.access_tokens[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires_at, resource=resource
        )
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_ttl,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--token-ttl", type=int, default=3600)
    args = ap.parse_args()
    base = f"http://127.0.0.1:{args.port}"
    provider = ApprovingProvider(args.token_ttl, f"{base}/mcp")
    mcp = MCPServer(
        "golem-py-auth-peer",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=True,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]
            ),
            required_scopes=["mcp"],
        ),
    )

    @mcp.tool()
    def echo(message: str) -> str:
        """Echo the message back."""
        return f"Echo: {message}"

    @mcp.tool()
    def issued() -> str:
        """How many access tokens each grant issued, e.g. 'authorization_code=1 refresh_token=0'."""
        return " ".join(f"{grant}={count}" for grant, count in provider.issued.items())

    mcp.run("streamable-http", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
