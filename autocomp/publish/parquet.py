"""Rows streamed into parquet shards whose schema carries the datasets features (so
`datasets` reads the images as Image and the lists as sequences), zstd-compressed with
dictionary encoding: a confusion item's 728 negatives share most of their words, and every
item of a benchmark shares its edits and categories.

A row group is flushed every GROUP_BYTES of buffered rows (or GROUP_ROWS rows), a shard is
closed past SHARD_BYTES, so memory stays at one row group whatever the benchmark's size.
Shards are data/<config>/test-00000.parquet, test-00001.parquet, ...
"""

from __future__ import annotations

from pathlib import Path

GROUP_BYTES = 32 << 20
GROUP_ROWS = 1000
SHARD_BYTES = 500 << 20


def _size(row: dict) -> int:
    """About how many bytes a row holds (images and text), to cut row groups."""
    total = 0
    for value in row.values():
        if isinstance(value, dict) and value.get("bytes") is not None:
            total += len(value["bytes"])
        elif isinstance(value, str):
            total += len(value)
        elif isinstance(value, list):
            total += sum(len(v) if isinstance(v, str) else 1 for v in value)
    return total


class ShardWriter:
    """`write(row)` rows of one config; `close()` returns the shard paths and row count."""

    def __init__(self, folder: Path, features, split: str = "test"):
        self.folder, self.features, self.split = Path(folder), features, split
        self.schema = features.arrow_schema
        self.buffer: list[dict] = []
        self.buffered = 0
        self.writer = None
        self.paths: list[Path] = []
        self.rows = 0

    def write(self, row: dict) -> None:
        self.buffer.append(row)
        self.buffered += _size(row)
        self.rows += 1
        if self.buffered >= GROUP_BYTES or len(self.buffer) >= GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self.buffer:
            return
        if self.writer is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            path = self.folder / f"{self.split}-{len(self.paths):05d}.parquet"
            self.paths.append(path)
            self.writer = pq.ParquetWriter(path, self.schema, compression="zstd",
                                           use_dictionary=True)
        encoded = [self.features.encode_example(r) for r in self.buffer]
        table = pa.Table.from_pylist(encoded, schema=self.schema)
        self.writer.write_table(table, row_group_size=len(encoded))
        self.buffer, self.buffered = [], 0
        if self.paths[-1].stat().st_size >= SHARD_BYTES:
            self.writer.close()
            self.writer = None

    def close(self) -> tuple[list[Path], int]:
        self._flush()
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        return self.paths, self.rows
