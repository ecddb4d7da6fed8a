"""Build nsys SQLite exports in the real 2025 schema (DDL as ``nsys export`` 2025.x writes it,
reference/formats.md §8) for tests and the 10-million-kernel benchmark."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

DDL = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
    streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
    demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
    launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
    gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
    blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,
    staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
    localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
    gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER,
    sharedMemoryLimitConfig INTEGER, qmdBulkReleaseDone INTEGER, qmdPreexitDone INTEGER,
    qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER, clusterY INTEGER,
    clusterZ INTEGER, clusterSchedulingPolicy INTEGER, maxPotentialClusterSize INTEGER,
    maxActiveClusters INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER,
    streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL,
    copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
    srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
    migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
    rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
    endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, uint64Value INTEGER,
    int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER,
    floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,
    busLocation TEXT, isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER,
    memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT,
    luid INTEGER, chipName TEXT, cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER NOT NULL, sourceId INTEGER NOT NULL,
    typeName TEXT NOT NULL, metricId INTEGER NOT NULL, metricName TEXT NOT NULL);
CREATE TABLE GPU_METRICS (rawTimestamp INTEGER NOT NULL, timestamp INTEGER NOT NULL,
    typeId INTEGER NOT NULL, metricId INTEGER NOT NULL, value INTEGER NOT NULL);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL,
    label TEXT);
"""
# As nsys 2024-25 writes it; 2020-22 exports lack the table but number the kinds the same way.
MEM_KIND_DDL = """
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL,
    label TEXT);
"""
MEM_KINDS = [
    (0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"),
    (1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"),
    (2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"),
    (3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"),
    (4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"),
    (5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"),
    (6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"),
    (7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"),
]
PAGEABLE, PINNED, DEVICE = 0, 1, 2  # srcKind/dstKind
HTOD, DTOH, DTOD = 1, 2, 8  # copyKind

PID = 0x1005E2A000000  # globalPid: (vm << 56) | (pid << 24)
TID = PID + 4242  # a thread of that process
H100 = ("NVIDIA H100 80GB HBM3", 3352320000000, 1980000000, 132, 9, 0)


@dataclass
class Kernel:
    name: str
    start: int
    end: int
    stream: int = 7
    device: int = 0
    grid: tuple[int, int, int] = (128, 1, 1)
    block: tuple[int, int, int] = (256, 1, 1)
    launched_at: int | None = None  # API call time on TID (default: 1 µs before start)


@dataclass
class Copy:
    """A memcpy with its sides' memory kinds (``PAGEABLE``, ``PINNED``, ``DEVICE``)."""

    start: int
    end: int
    bytes: int
    kind: int = HTOD
    src: int | None = PAGEABLE
    dst: int | None = DEVICE
    device: int = 0
    stream: int = 7


@dataclass
class Export:
    kernels: list[Kernel] = field(default_factory=list)
    ranges: list[tuple[int, int, str]] = field(default_factory=list)  # push/pop on TID
    memcpy: list[tuple[int, int, int, int]] = field(default_factory=list)  # start,end,bytes,kind
    metrics: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # name: (ts, v)
    gpu: tuple = H100
    copies: list[Copy] = field(default_factory=list)
    mem_kind_enum: bool = True  # False: no ENUM_CUDA_MEM_KIND table, as in 2020-22 exports

    def write(self, path: Path) -> Path:
        con = sqlite3.connect(path)
        con.executescript(DDL)
        strings: dict[str, int] = {}

        def sid(text: str) -> int:
            return strings.setdefault(text, len(strings) + 1)

        for i, k in enumerate(self.kernels):
            corr = 1000 + i
            name = sid(k.name)
            short = sid(k.name.split("(")[0].split("<")[0].split()[-1])
            con.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, "
                "streamId, correlationId, globalPid, demangledName, shortName, "
                "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
                "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
                "localMemoryTotal, gridId) VALUES (?,?,?,1,?,?,?,?,?,32,?,?,?,?,?,?,0,0,0,0,?)",
                (k.start, k.end, k.device, k.stream, corr, PID, name, short, *k.grid, *k.block, i),
            )
            at = k.launched_at if k.launched_at is not None else k.start - 1000
            con.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)",
                (at, at + 500, TID, corr, sid("cudaLaunchKernel_v7000")),
            )
        for start, end, name in self.ranges:
            con.execute(
                "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                "VALUES (?, ?, 59, ?, ?, 0)",
                (start, end, name, TID),
            )
        for start, end, size, kind in self.memcpy:
            con.execute(
                "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, "
                "streamId, bytes, copyKind) VALUES (?, ?, 0, 1, 7, ?, ?)",
                (start, end, size, kind),
            )
        con.executemany(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
            "bytes, copyKind, srcKind, dstKind) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)",
            [(c.start, c.end, c.device, c.stream, c.bytes, c.kind, c.src, c.dst)
             for c in self.copies],
        )  # fmt: skip
        if self.mem_kind_enum:
            con.executescript(MEM_KIND_DDL)
            con.executemany("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)", MEM_KINDS)
        con.executemany(
            "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)",
            [(1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"),
             (2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"),
             (8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device")],
        )  # fmt: skip
        type_id = 0x0001000100000000
        for metric_id, (name, samples) in enumerate(self.metrics.items()):
            con.execute(
                "INSERT INTO TARGET_INFO_GPU_METRICS VALUES (?, ?, '', ?, ?)",
                (type_id, type_id, metric_id, name),
            )
            # nsys's first sample of every series: negative time, garbage value
            rows = [(-66163, -2140552984), *samples]
            con.executemany(
                "INSERT INTO GPU_METRICS VALUES (?, ?, ?, ?, ?)",
                [(ts, ts, type_id, metric_id, v) for ts, v in rows],
            )
        name, bandwidth, clock, sms, major, minor = self.gpu
        con.execute(
            "INSERT INTO TARGET_INFO_GPU (vmId, id, name, memoryBandwidth, clockRate, smCount, "
            "computeMajor, computeMinor) VALUES (?, 0, ?, ?, ?, ?, ?, ?)",
            (1 << 48, name, bandwidth, clock, sms, major, minor),
        )
        con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(v, k) for k, v in strings.items()])
        con.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.20.3')")
        con.commit()
        con.close()
        return path


def write_many(path: Path, n: int, names: int = 100) -> Path:
    """``n`` kernels of ``names`` distinct names, generated inside SQLite (seconds, not
    minutes, for ten million rows); 4 streams, 2 µs apart, 0.5–1.5 µs long."""
    con = sqlite3.connect(path)
    con.executescript("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;" + DDL)
    con.executemany(
        "INSERT INTO StringIds VALUES (?, ?)",
        [
            (i, f"void at::native::vectorized_elementwise_kernel<{i}, float>(int, T2)")
            if i % 3
            else (i, f"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize{i}x128x64_kernel")
            for i in range(names)
        ],
    )
    con.execute(
        f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
        f"correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, "
        f"gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
        f"localMemoryPerThread, localMemoryTotal, gridId) "
        f"WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c LIMIT {int(n)}) "
        f"SELECT x * 2000, x * 2000 + 500 + (x * 7919) % 1000, 0, 1, 7 + x % 4, x, {PID}, "
        f"x % {int(names)}, x % {int(names)}, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, x FROM c"
    )
    name, bandwidth, clock, sms, major, minor = H100
    con.execute(
        "INSERT INTO TARGET_INFO_GPU (vmId, id, name, memoryBandwidth, clockRate, smCount, "
        "computeMajor, computeMinor) VALUES (?, 0, ?, ?, ?, ?, ?, ?)",
        (1 << 48, name, bandwidth, clock, sms, major, minor),
    )
    con.commit()
    con.close()
    return path
