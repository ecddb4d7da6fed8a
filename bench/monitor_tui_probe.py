"""Run ``roofscope monitor``'s app headless on the real NVML source for N seconds, then save
what its screen shows (SVG) — the device-side check of the Monitor pane."""

from __future__ import annotations

import sys

from roofscope.monitor.nvml import NvmlSource
from roofscope.tui.monitor_app import MonitorApp


def main() -> None:
    seconds, out = float(sys.argv[1]), sys.argv[2]
    interval = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    source = NvmlSource()
    app = MonitorApp(lambda: source, interval=interval)

    def finish() -> None:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(app.export_screenshot())
        app.exit()

    app.call_later(lambda: app.set_timer(seconds, finish))
    app.run(headless=True, size=(100, 32))


if __name__ == "__main__":
    main()
