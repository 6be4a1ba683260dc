"""write_all: a short os.write never ends a file early."""

from __future__ import annotations

import os
import threading

from contextfs.files.durability import write_all


def test_every_byte_reaches_a_pipe_that_takes_a_little_at_a_time() -> None:
    data = os.urandom(1 << 20)  # far more than a pipe buffer: os.write takes part of it
    read_fd, write_fd = os.pipe()
    got = bytearray()

    def drain() -> None:
        while chunk := os.read(read_fd, 4096):
            got.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        write_all(write_fd, data)
    finally:
        os.close(write_fd)
        reader.join()
        os.close(read_fd)
    assert bytes(got) == data
