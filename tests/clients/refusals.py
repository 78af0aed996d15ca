"""POSTs without a token to the gateway, N times on one pooled httpx client (as the MCP SDKs'
OAuth flows do before they have a token): every one must get its 401, none may meet a connection
the server closed behind the pool's back. Prints {"refused": R, "disconnected": D, "of": N}."""

import argparse
import json

import httpx

BODY = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'

parser = argparse.ArgumentParser()
parser.add_argument("--url", required=True)
parser.add_argument("--times", type=int, default=200)
args = parser.parse_args()

refused = disconnected = 0
with httpx.Client() as client:
    for _ in range(args.times):
        try:
            answer = client.post(
                args.url,
                content=BODY,
                headers={
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                },
            )
            refused += answer.status_code == 401
        except httpx.RemoteProtocolError:
            disconnected += 1
print(json.dumps({"refused": refused, "disconnected": disconnected, "of": args.times}))
