"""Progress of a batch: a line per finished submission that stays on screen (on a terminal,
unless the batch asks for the bar alone), and on a terminal a bar below them, redrawn every
second, with an ETA that counts down while submissions run."""

import sys
import threading
import time


PACED = 3  # submissions finished before an ETA is given


class Progress:
    """A line per finished submission (kept), and on a terminal a live bar with an ETA. Not
    ``each``: on a terminal the bar alone; in a log (no bar there) the lines all the same, so
    that a long run shows it is moving."""

    def __init__(self, total: int, stream=None, *, tick: float = 1.0, each: bool = True,
                 done_word: str = "graded",
                 stall_hint: str = "a cell may be running into its time limit",
                 groups: int = 0):
        self.total, self.done, self.began = total, 0, time.monotonic()
        # runs that each pay a start-up of their own (``make feedback``: nbgrader per lesson),
        # each begun with ``start_group``: the ETA counts the start-ups still to come
        self.groups, self.group_began, self.group_first = groups, [], None
        self.paced = [0.0, 0]  # seconds between finishes within a group, and how many
        self.startups = []  # per group begun: its start to its first finish
        self.done_word = done_word  # "3/23 graded" in the bar
        self.each = each
        self.stall_hint = stall_hint  # why the estimate may run out; "" where no cell runs
        self.last = self.began  # when a submission last finished
        self.first = None  # when the first finished: the start-up before it is not the pace
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        if self.tty and tick:
            threading.Thread(target=self._ticker, args=(tick,), daemon=True).start()

    def update(self, label: str) -> None:
        """One more submission finished; ``label`` says whose and how it went."""
        with self.lock:
            self.done += 1
            previous, self.last = self.last, time.monotonic()
            if self.group_began and self.group_first is None:
                self.group_first = self.last
                self.startups.append(self.last - self.group_began[-1])
            elif self.group_began:
                self.paced = [self.paced[0] + self.last - previous, self.paced[1] + 1]
            self.first = self.last if self.first is None else self.first
            width = len(str(self.total))
            line = f"[{self.done:>{width}}/{self.total}] {label}"
            if self.tty:
                self.stream.write("\r\x1b[2K" + (line + "\n" if self.each else ""))
                if self.done < self.total:
                    self.stream.write(self.bar())
                else:
                    self.stopped.set()
            else:
                self.stream.write(f"{line}  ({self._rest()})\n")
            self.stream.flush()

    def start_group(self) -> None:
        """A run with a start-up of its own begins (``groups``)."""
        with self.lock:
            self.group_began.append(time.monotonic())
            self.group_first = None

    def note(self, text: str) -> None:
        """A line of its own that stays on screen, above the bar on a terminal."""
        with self.lock:
            if self.tty:
                self.stream.write("\r\x1b[2K" + text + "\n"
                                  + (self.bar() if self.done < self.total else ""))
            else:
                self.stream.write(text + "\n")
            self.stream.flush()

    def _rest(self) -> str:
        """The ETA on a submission's line, worded as the batch's, not that submission's."""
        return "all done" if self.done >= self.total else f"the rest: {self.eta()}"

    def eta(self, at: float | None = None) -> str:
        """The time left: the pace since the first submission finished (the start-up before
        it, kernels and imports, is not counted: it once made the first ETA eight times too
        long) times those left, less the time since the last one finished; "estimating" until
        ``PACED`` have finished; while the estimate is used up and some still run, says so.
        With ``groups`` (a start-up paid again per group, as ``make feedback``'s nbgrader run per
        lesson), the pace within groups plus the mean start-up times the groups still to begin:
        without them, each new group's start-up made the estimate rise (19 s, then 28 s)."""
        at = time.monotonic() if at is None else at
        if self.done == 0:
            return f"{_clock(at - self.began)} elapsed, ETA after the first"
        if self.done >= self.total:
            return "done"
        if self.done < PACED or self.first is None or self.last <= self.first:
            return "ETA estimating"
        if self.groups and not self.paced[1]:  # one item a group so far: start-ups and all
            mean, waiting = (self.last - self.began) / self.done, 0.0
        elif self.groups:
            mean = self.paced[0] / self.paced[1]
            startup = max(0.0, sum(self.startups) / len(self.startups) - mean)
            waiting = startup * max(0, self.groups - len(self.group_began))
        else:
            mean, waiting = (self.last - self.first) / (self.done - 1), 0.0
        left = mean * (self.total - self.done) + waiting - (at - self.last)
        if left >= 1:
            return f"ETA {_clock(left)}"
        hint = f" ({self.stall_hint})" if self.stall_hint else ""
        return f"ETA unknown: {self.total - self.done} still running, {_clock(at - self.last)} " \
               f"since the last finished{hint}"

    def bar(self) -> str:
        filled = int(20 * self.done / self.total)
        return (f"{'█' * filled}{'░' * (20 - filled)} {self.done}/{self.total} "
                f"{self.done_word}, "
                f"{_clock(time.monotonic() - self.began)} elapsed, {self.eta()}")

    def _ticker(self, every: float) -> None:
        while not self.stopped.wait(every):
            with self.lock:
                self.stream.write("\r\x1b[2K" + self.bar())
                self.stream.flush()

    def close(self) -> None:
        """Stop redrawing; a bar left unfinished (a run cut short) is erased."""
        self.stopped.set()
        with self.lock:
            if self.tty and self.done < self.total:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds + 0.5), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"
