"""blk._results: what compiling and autotuning report (blk.CompileResult,
blk.TuneResult), made from libblk's structs."""

from . import _ffi


class CompileResult:
    """What blk_kernel_compile reports: ptx (str; None on the interpreter),
    shared_bytes, num_warps, num_stages, spill_bytes (GPU: bytes of
    registers a thread spills to local memory, 0 for none), warnings (the
    compilation's warnings, a line each, or ""), from_disk_cache, phases (ms
    by phase: parse, irgen, passes, LLVM, PTX, cubin; 0 where not done now),
    ms (their sum), registers (GPU: registers a thread, from the driver;
    None on the interpreter)."""

    def __init__(self, info, backend):
        self.backend = backend
        self.ptx = info.ptx[:info.ptx_len].decode() if info.ptx else None
        self.shared_bytes = info.shared_bytes
        self.num_warps = info.num_warps
        self.num_stages = info.num_stages
        self.spill_bytes = info.spill_bytes
        self.warnings = info.warnings.decode(errors="replace") if info.warnings else ""
        self.registers = info.registers if info.registers > 0 else None
        self.from_disk_cache = bool(info.from_disk_cache)
        self.phases = {name: getattr(info, key) for key, name in _ffi.COMPILE_PHASES}
        self.ms = sum(self.phases.values())

    def __repr__(self):
        ph = ", ".join(f"{k} {v:.2f}" for k, v in self.phases.items())
        return (f"<blk.CompileResult {self.backend}: shared {self.shared_bytes} B, num_warps {self.num_warps}, "
                f"num_stages {self.num_stages}, {self.ms:.2f} ms ({ph})>")


class TuneResult:
    """What blk_autotune reports: ms (a list, one a config; None where it could
    not run or was pruned, 0 where it ran untimed, as on the interpreter), notes
    (why not), pruned (a dict: the index of each config pruned before timing,
    on a GPU, to why, e.g. {1: "64 programs on 132 SMs; BLOCK=128 gives 512"}),
    best (the index of the fastest). Prints as
    <blk.TuneResult best config 1; 0: 0.0213 ms, *1: 0.0171 ms, 2: - (why)>."""

    def __init__(self, res):
        n = min(res.n_configs, _ffi.TUNE_MAX_CONFIGS)
        self.best = res.best
        self.ms = [res.ms[i] if res.ms[i] >= 0 else None for i in range(n)]
        self.notes = [res.note[i].value.decode(errors="replace") for i in range(n)]
        cut = len("pruned: ")
        self.pruned = {i: self.notes[i][cut:] if self.notes[i].startswith("pruned: ") else self.notes[i]
                       for i in range(n) if res.ms[i] == _ffi.TUNE_PRUNED}

    def __repr__(self):
        def one(i, ms):
            mark = "*" if i == self.best else ""
            if ms is None:
                note = self.notes[i] if i < len(self.notes) and self.notes[i] else "did not run"
                return f"{mark}{i}: - ({note})"
            if ms == 0:  # the interpreter runs a config without timing it
                return f"{mark}{i}: ran, not timed"
            return f"{mark}{i}: {ms:.4g} ms"
        if not self.ms:
            return "<blk.TuneResult: no configs>"
        best = f"config {self.best}" if 0 <= self.best < len(self.ms) and self.ms[self.best] is not None else "none ran"
        return f"<blk.TuneResult best {best}; {', '.join(one(i, ms) for i, ms in enumerate(self.ms))}>"
