"""The build log both test upstreams serve (`issues_server.py`, `modern_only.py`): 3,000 lines
whose link step fails on line 2412, so that a question about the failure has one line to find."""


def build_log_text() -> str:
    lines = []
    for i in range(1, 3001):
        if i == 2412:
            lines.append(f"[{i:05d}] ERROR linker: undefined reference to `ws_reconnect_backoff' in websocket/client.o")
        else:
            lines.append(f"[{i:05d}] INFO compiling module_{i % 97}.c ({i * 7 % 1000} ms)")
    return "\n".join(lines) + "\n"
