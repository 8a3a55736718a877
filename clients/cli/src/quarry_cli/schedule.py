"""``quarry schedule``: research that runs itself, from the command line (docs/schedules.md).

``quarry schedule add "QUESTION" --cron daily --tz Europe/Paris [--webhook URL]`` (the webhook's
secret comes from ``QUARRY_WEBHOOK_SECRET``, never from an argument a process list would show),
``list``, ``show ID``, ``pause ID``, ``resume ID``, ``run ID``, ``delete ID``. ``--json`` prints
the API's JSON. Exit 0 on success, 2 when the API refuses the request (its problem's detail on
stderr) or the usage is wrong, 1 for a server error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from typing import Any, TextIO

import httpx

from quarry_cli.status import EXIT_OK, EXIT_USAGE, problem_message, refused

SECRET_ENV = "QUARRY_WEBHOOK_SECRET"  # noqa: S105 - the variable's name, not a secret
_ACTIONS = ("add", "list", "show", "pause", "resume", "run", "delete")


def add_parser(sub: Any) -> None:
    """Register ``quarry schedule`` on the subcommand parsers ``sub``."""
    p = sub.add_parser("schedule", help="research that runs itself on a timetable")
    p.add_argument("action", choices=_ACTIONS)
    p.add_argument("target", nargs="?", default="", help="the question (add) or a schedule id")
    p.add_argument("--cron", default="daily", help="cron expression, or daily, weekly, hourly")
    p.add_argument("--tz", default="UTC", help="IANA time zone (default UTC)")
    p.add_argument("--name", help="a short name (default: the question)")
    p.add_argument("--mode", choices=("deep-research", "due-diligence"), default="deep-research")
    p.add_argument("--webhook", help=f"POST each finished run here (secret from ${SECRET_ENV})")
    p.add_argument("--json", action="store_true", help="print the API's JSON")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds")


def _when(epoch: float | None) -> str:
    return (
        datetime.fromtimestamp(epoch).astimezone().strftime("%Y-%m-%d %H:%M %Z") if epoch else "-"
    )


def _line(s: dict[str, Any]) -> str:
    nxt = "paused" if s["paused"] else f"next {_when(s['next_run_at'])}"
    last = s.get("last_run")
    done = (
        f"last {last['status']} {_when(last['at'])} ({last['research_id']})"
        if last
        else "no run yet"
    )
    return f"{s['id']}  {s['name'][:40]}  [{s['cron']} {s['timezone']}]  {nxt}  {done}"


def _body(args: argparse.Namespace) -> dict[str, Any] | str:
    if not args.target.strip():
        return "schedule add needs the question"
    body: dict[str, Any] = {
        "query": args.target, "cron": args.cron, "timezone": args.tz, "mode": args.mode,
    }  # fmt: skip
    if args.name:
        body["name"] = args.name
    if args.webhook:
        secret = os.environ.get(SECRET_ENV, "")
        if not secret:
            return f"--webhook needs its signing secret in ${SECRET_ENV} (16+ characters)"
        body["webhook"] = {"url": args.webhook, "secret": secret}
    return body


def _request(client: httpx.Client, args: argparse.Namespace) -> httpx.Response | str:
    path = f"/v1/schedules/{args.target}"
    if args.action == "list":
        return client.get("/v1/schedules", params={"limit": 100})
    if args.action == "add":
        body = _body(args)
        return body if isinstance(body, str) else client.post("/v1/schedules", json=body)
    if not args.target:
        return f"schedule {args.action} needs a schedule id"
    if args.action == "show":
        return client.get(path)
    if args.action in ("pause", "resume"):
        return client.patch(path, json={"paused": args.action == "pause"})
    if args.action == "run":
        return client.post(f"{path}/run", json={})
    return client.delete(path)


def run_schedule(client: httpx.Client, args: argparse.Namespace, out: TextIO) -> int:
    """Do the action; print the result."""
    reply = _request(client, args)
    if isinstance(reply, str):
        sys.stderr.write(f"quarry: {reply}\n")
        return EXIT_USAGE
    if reply.status_code >= 400:
        sys.stderr.write(f"quarry: {problem_message(reply)}\n")
        return refused(reply)
    if reply.status_code == 204:
        out.write(f"deleted {args.target}\n")
        return EXIT_OK
    body = reply.json()
    if args.json:
        out.write(json.dumps(body, indent=2) + "\n")
    elif args.action == "list":
        out.write("".join(_line(s) + "\n" for s in body["schedules"]) or "no schedules\n")
    elif args.action == "run":
        out.write(
            f"started {body['research_id']} (quarry research --resume {body['research_id']})\n"
        )
    else:
        out.write(_line(body) + "\n")
    return EXIT_OK
