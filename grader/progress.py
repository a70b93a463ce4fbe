"""Progress of a batch: one line per finished submission (a redrawn bar on a terminal)."""

import sys
import time


class Progress:
    """One line per finished submission (or a redrawn bar on a terminal), with an ETA."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.began = total, 0, time.monotonic()
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty()

    def update(self, label: str) -> None:
        self.done += 1
        elapsed = time.monotonic() - self.began
        eta = elapsed / self.done * (self.total - self.done)
        filled = int(20 * self.done / self.total)
        bar = "█" * filled + "░" * (20 - filled)
        line = (f"[{self.done:>{len(str(self.total))}}/{self.total}] {bar} "
                f"{elapsed / self.done:5.1f} s/notebook, ETA {_clock(eta)}  {label}")
        if self.tty:
            self.stream.write("\r\x1b[2K" + line + ("\n" if self.done == self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds + 0.5), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"
