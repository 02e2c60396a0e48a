"""blk.nn: AdamW and clip_grad_norm_ over stdlib/nn/optim.tile, each a
multi-tensor kernel: one launch for a whole list of parameters, through a
table of their addresses kept on the device, and no host sync."""

import math

import torch

from . import _kernels as K
from . import _multi as M

_LOW = (torch.bfloat16, torch.float16)


def _float(x, what):
    """A hyperparameter as a Python float (a tensor is read: one sync)."""
    if isinstance(x, torch.Tensor):
        x = x.item()
    x = float(x)
    if math.isnan(x):
        raise ValueError(f"blk.nn.AdamW: {what} is NaN")
    return x


class _Table:
    """What one launch of adamw reads for a list of parameters (all on one
    device, each with a gradient): the table of addresses, sizes and kinds,
    the program mapping, the steps and the counter, built once and kept
    while the list and its state tensors stay the same."""

    def __init__(self, opt, params, master):
        dev = params[0].device
        self.params = list(params)
        self.want_master = master
        self.device = dev
        self.chunk = M.chunk(dev)
        st = [opt._state_for(p, master) for p in self.params]
        self.m = [s["exp_avg"] for s in st]
        self.v = [s["exp_avg_sq"] for s in st]
        self.w = [s.get("master_param") if master else None for s in st]
        # the steps of the list: one device buffer, which the kernel
        # increments; each parameter's state["step"] becomes its element
        self.steps = torch.stack([s["step"].to(device=dev, dtype=torch.float32) for s in st])
        for i, s in enumerate(st):
            s["step"] = self.steps[i]
        self.step_views = [s["step"] for s in st]
        self.kinds = [M.kind(p, "AdamW") for p in self.params]
        numels = [p.numel() for p in self.params]
        prog_tensor, first = M.mapping(numels, self.chunk)
        self.n_progs = len(prog_tensor)
        n = len(self.params)
        self.mirror = None
        self.grads, self.grad_addrs = None, None
        if dev.type == "cuda":
            self.p_addrs = [p.data_ptr() for p in self.params]
            a = self.p_addrs + [t.data_ptr() for t in self.m + self.v]
            w_addr = [w.data_ptr() if w is not None else 0 for w in self.w]
        else:
            # the interpreter: parameters, gradients, state and masters copied
            # into its memory at each step, and back but for the gradients
            ws = [w for w in self.w if w is not None]
            self.mirror = M.Mirror(self.params + [p.grad for p in self.params] + self.m + self.v + ws)
            a = self.mirror.addrs
            self.grads = M.upload(a[n:2 * n], torch.int64, dev)
            wi = iter(a[4 * n:])
            w_addr = [next(wi) if w is not None else 0 for w in self.w]
            a = a[:n] + a[2 * n:4 * n]
        self.aligned = M.aligned(a + w_addr) and (self.mirror is None or M.aligned(self.mirror.addrs))
        self.table = M.upload(a + w_addr + numels + self.kinds + first, torch.int64, dev)
        self.prog_tensor = M.upload(prog_tensor, torch.int32, dev)
        self.counter = torch.zeros(1, dtype=torch.int32, device=dev)
        self.consts = dict(M.flags(self.kinds), MASTER=master and any(p.dtype in _LOW for p in self.params),
                           ALIGNED=self.aligned, BLOCK=M.BLOCK)

    def valid(self, opt, params, master):
        """Whether this table still describes params: the same tensors (at
        the same addresses on the GPU), the same state tensors."""
        if len(params) != len(self.params) or master != self.want_master:
            return False
        state = opt.state
        for i, p in enumerate(params):
            s = state.get(p)
            if p is not self.params[i] or not s or s.get("exp_avg") is not self.m[i] or \
                    s.get("exp_avg_sq") is not self.v[i] or s.get("step") is not self.step_views[i] or \
                    (master and s.get("master_param") is not self.w[i]):
                return False
        return self.mirror is not None or all(p.data_ptr() == a for p, a in zip(params, self.p_addrs))

    def launch(self, group):
        lr = _float(group["lr"], "lr")
        b1, b2 = (_float(b, "betas") for b in group["betas"])
        eps, wd = _float(group["eps"], "eps"), _float(group["weight_decay"], "weight_decay")
        grads = [p.grad for p in self.params]
        for p, g in zip(self.params, grads):
            if g.is_sparse or g.dtype != p.dtype or g.shape != p.shape or not g.is_contiguous():
                raise ValueError(f"blk.nn.AdamW: a {'sparse ' if g.is_sparse else ''}gradient of {g.dtype}, shape "
                                 f"{tuple(g.shape)}, strides {None if g.is_sparse else g.stride()} for a "
                                 f"parameter of {p.dtype}, shape {tuple(p.shape)}: a contiguous gradient of the "
                                 f"parameter's dtype and shape expected")
        ws = [w for w in self.w if w is not None]
        if self.mirror is None:
            addrs = [g.data_ptr() for g in grads]
            if addrs != self.grad_addrs:   # new gradients (zero_grad(set_to_none=True)): upload, no sync
                self.grads = M.upload(addrs, torch.int64, self.device)
                self.grad_addrs = addrs
                self.consts["ALIGNED"] = self.aligned and M.aligned(addrs)
        else:
            self.mirror.put(self.params + grads + self.m + self.v + ws)
        if self.n_progs:
            K.module("optim").adamw[(self.n_progs,)](
                self.table, self.grads, self.prog_tensor, self.steps, self.counter, len(self.params),
                self.n_progs, self.chunk, lr, b1, b2, eps, wd, num_warps=4, **self.consts)
        else:   # only empty tensors: nothing to update but their steps
            self.steps.add_(1)
        if self.mirror is not None:
            self.mirror.get(self.params + [None] * len(grads) + self.m + self.v + ws)


class AdamW(torch.optim.Optimizer):
    """torch.optim.AdamW (decoupled weight decay, bias correction, amsgrad
    and maximize off) whose step() updates every parameter of a group that
    has a gradient in one launch of stdlib/nn/optim.tile's adamw, a
    multi-tensor kernel: the addresses, sizes and the program-to-tensor
    mapping are a device table built at the first step and kept while the
    group's parameters with gradients and their state stay the same. The
    steps taken are on the device (each parameter's state["step"], a float32
    tensor the kernel increments), so step() never waits for the GPU.

    The state exp_avg and exp_avg_sq is float32 (float64 for float64
    parameters). master_weights=True: each bfloat16 or float16 parameter
    has a float32 copy (state["master_param"]) that the kernel updates and
    then rounds into the parameter. Parameters of float32, bfloat16, float16
    and float64 may be mixed in a group; float64 ones compute in float64.
    lr, betas, eps and weight_decay are read at each step (a scheduler may
    change them). foreach_max_tensors: at most that many tensors a launch
    (None: a group's parameters on one device in one launch)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, master_weights=False,
                 foreach_max_tensors=None):
        if not 0.0 <= float(lr):
            raise ValueError(f"blk.nn.AdamW: learning rate {lr}: at least 0 expected")
        if not 0.0 <= float(eps):
            raise ValueError(f"blk.nn.AdamW: eps {eps}: at least 0 expected")
        for i, b in enumerate(betas):
            if not 0.0 <= float(b) < 1.0:
                raise ValueError(f"blk.nn.AdamW: betas[{i}] = {b}: in [0, 1) expected")
        if not 0.0 <= float(weight_decay):
            raise ValueError(f"blk.nn.AdamW: weight_decay {weight_decay}: at least 0 expected")
        if foreach_max_tensors is not None and int(foreach_max_tensors) < 1:
            raise ValueError(f"blk.nn.AdamW: foreach_max_tensors {foreach_max_tensors}: at least 1, or None")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        master_weights=bool(master_weights))
        super().__init__(params, defaults)
        self.foreach_max_tensors = foreach_max_tensors
        self._tables = {}      # (group index, device, segment) -> _Table
        self.tables_built = 0  # how many tables were built (a changed parameter set builds anew)

    def _state_for(self, p, master):
        """p's state, made at its first step, in the types the kernel takes."""
        s = self.state[p]
        sdt = torch.float64 if p.dtype == torch.float64 else torch.float32
        if not s:
            s["step"] = torch.zeros((), dtype=torch.float32, device=p.device)
            s["exp_avg"] = torch.zeros_like(p, dtype=sdt, memory_format=torch.contiguous_format)
            s["exp_avg_sq"] = torch.zeros_like(p, dtype=sdt, memory_format=torch.contiguous_format)
        for k in ("exp_avg", "exp_avg_sq"):   # e.g. loaded from a state_dict in another type
            t = s[k]
            if t.dtype != sdt or t.device != p.device or not t.is_contiguous():
                s[k] = t.to(device=p.device, dtype=sdt, memory_format=torch.contiguous_format)
        if master and p.dtype in _LOW:
            w = s.get("master_param")
            if w is None:
                s["master_param"] = p.detach().to(dtype=torch.float32, memory_format=torch.contiguous_format)
            elif w.dtype != torch.float32 or w.device != p.device or not w.is_contiguous():
                s["master_param"] = w.to(device=p.device, dtype=torch.float32,
                                         memory_format=torch.contiguous_format)
        return s

    def load_state_dict(self, state_dict):
        """torch's, then the state tensors back in the types this optimizer
        keeps them (torch casts every floating state tensor to its
        parameter's dtype: a float32 master of a bfloat16 parameter would
        come back rounded to bfloat16)."""
        saved = state_dict["state"]
        ids = [i for g in state_dict["param_groups"] for i in g["params"]]
        super().load_state_dict(state_dict)
        params = [p for g in self.param_groups for p in g["params"]]
        for i, p in zip(ids, params):
            for k, v in saved.get(i, {}).items():
                if isinstance(v, torch.Tensor) and k in ("step", "exp_avg", "exp_avg_sq", "master_param"):
                    dt = torch.float64 if p.dtype == torch.float64 and k != "step" else torch.float32
                    self.state[p][k] = v.to(device=p.device, dtype=dt, copy=True)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for gi, group in enumerate(self.param_groups):
            by_dev = {}
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not p.is_contiguous():
                    raise ValueError(f"blk.nn.AdamW: a parameter of shape {tuple(p.shape)} and strides "
                                     f"{p.stride()} is not contiguous")
                by_dev.setdefault(p.device, []).append(p)
            cap = self.foreach_max_tensors or max(1, max((len(v) for v in by_dev.values()), default=1))
            for dev, ps in by_dev.items():
                for si in range(0, len(ps), cap):
                    seg = ps[si:si + cap]
                    key = (gi, dev, si)
                    master = bool(group["master_weights"])
                    tab = self._tables.get(key)
                    if tab is None or not tab.valid(self, seg, master):
                        tab = _Table(self, seg, master)
                        self._tables[key] = tab
                        self.tables_built += 1
                    tab.launch(group)
        return loss


# ---- clip_grad_norm_ ---------------------------------------------------------

_NORM_TABLES = {}   # (device, addresses, sizes, kinds) -> (table, prog_tensor, partial, counter), a few


def _norm_code(norm_type):
    p = float(norm_type)
    if p == math.inf:
        return 0, p
    if p in (1.0, 2.0):
        return int(p), p
    if not p > 0.0:
        raise ValueError(f"blk.nn.clip_grad_norm_: norm_type {norm_type}: a positive p or inf expected")
    return 3, p


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """torch.nn.utils.clip_grad_norm_ in two launches and no host sync: the
    norm of all the gradients together (a multi-tensor kernel: a partial
    norm per program, added by the last program to finish, which also
    computes the factor min(max_norm / (norm + 1e-6), 1)), then every
    gradient multiplied by that factor, read from device memory by a second
    multi-tensor launch (which writes nothing when it is 1). Returns the
    total norm, a 0-dim float32 tensor (float64 where a gradient is
    float64) on the gradients' device. norm_type: 2, 1, inf or any p > 0.
    error_if_nonfinite=True reads the norm (one sync). foreach is
    accepted and ignored."""
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    code, pval = _norm_code(norm_type)
    if not grads:
        return torch.tensor(0.0)   # torch's answer (on torch's default device)
    dev = grads[0].device
    for g in grads:
        if g.device != dev:
            raise ValueError(f"blk.nn.clip_grad_norm_: gradients on {dev} and {g.device}: one device expected")
        if g.is_sparse or not g.is_contiguous():
            raise ValueError(f"blk.nn.clip_grad_norm_: a {'sparse' if g.is_sparse else 'non-contiguous'} "
                             f"gradient of shape {tuple(g.shape)}: contiguous ones expected")
    kinds = [M.kind(g, "clip_grad_norm_") for g in grads]
    numels = [g.numel() for g in grads]
    f64 = 3 in kinds
    cdt = torch.float64 if f64 else torch.float32
    consts = dict(M.flags(kinds), C="f64" if f64 else "f32", BLOCK=M.BLOCK)
    size = M.chunk(dev)
    mirror = None
    if dev.type == "cuda":
        addrs = [g.data_ptr() for g in grads]
        key = (dev, tuple(addrs), tuple(numels), tuple(kinds))
        bufs = _NORM_TABLES.get(key)
    else:
        mirror = M.Mirror(grads)
        mirror.put(grads)
        addrs, bufs = mirror.addrs, None
    if bufs is None:
        prog_tensor, first = M.mapping(numels, size)
        bufs = (M.upload(addrs + numels + kinds + first, torch.int64, dev), M.upload(prog_tensor, torch.int32, dev),
                torch.empty(max(1, len(prog_tensor)), dtype=cdt, device=dev),
                torch.zeros(1, dtype=torch.int32, device=dev), len(prog_tensor))
        if mirror is None:
            if len(_NORM_TABLES) >= 8:
                _NORM_TABLES.pop(next(iter(_NORM_TABLES)))
            _NORM_TABLES[key] = bufs
    table, prog_tensor, partial, counter, n_progs = bufs
    consts["ALIGNED"] = M.aligned(addrs)
    out = torch.zeros(2, dtype=cdt, device=dev)
    if n_progs:
        m = K.module("optim")
        m.grad_norm[(n_progs,)](table, prog_tensor, partial, counter, out, len(grads), n_progs, size, pval,
                                float(max_norm), NORM=code, **consts)
        if error_if_nonfinite and not bool(torch.isfinite(out[0])):
            raise RuntimeError(f"blk.nn.clip_grad_norm_: the gradients' {float(norm_type)}-norm is "
                               f"{float(out[0])}, not finite (error_if_nonfinite=False scales by it all the same)")
        m.grad_scale[(n_progs,)](table, prog_tensor, out, len(grads), n_progs, size, **consts)
        if mirror is not None:
            mirror.get(grads)
    return out[0]
