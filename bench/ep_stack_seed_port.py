"""A faithful port of the seed's EP stack probe loop (seeds/ep_spring_stack_probe.py),
kept only as the benchmark's baseline: per-block parameter dicts, the force rebuilt
with autograd at every relaxation step, ``torch.autograd.functional`` jvp and vjp
at every nudged step and phase, BPTT without checkpointing. Not used by the pipeline."""

import math

import torch
import torch.nn.functional as F


class EQStack:
    def __init__(self, vocab, K, C, H, T, gamma=1.0, c=1.0):
        def g(*sh, sc):
            return (torch.randn(*sh) * sc).requires_grad_(True)

        def z1(n, v):
            return torch.full((n,), float(v)).requires_grad_(True)

        self.vocab = vocab
        self.K, self.C, self.H, self.dh, self.T = K, C, H, C // H, T
        self.gamma, self.c = gamma, c
        self.tok = g(vocab, C, sc=0.02)
        self.pos = g(T, C, sc=0.02)
        self.blocks = []
        for _ in range(K):
            self.blocks.append(dict(
                WQ=g(C, C, sc=1 / math.sqrt(C)), WK=g(C, C, sc=1 / math.sqrt(C)),
                WV=g(C, C, sc=1 / math.sqrt(C)), WO=g(C, C, sc=1 / math.sqrt(C)),
                ln1g=z1(C, 1), ln1b=z1(C, 0), ln2g=z1(C, 1), ln2b=z1(C, 0),
                fc=g(C, 4 * C, sc=1 / math.sqrt(C)), fcb=z1(4 * C, 0),
                pj=g(4 * C, C, sc=1 / math.sqrt(4 * C)), pjb=z1(C, 0)))
        self.Wh = g(C, vocab, sc=1 / math.sqrt(C))
        self.cmask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        self.block = [self.tok, self.pos] + [p for b in self.blocks for p in b.values()]
        self.allp = self.block + [self.Wh]

    def embed(self, idx):
        return self.tok[idx] + self.pos[None]

    def battn(self, b, z):
        B, T, H, dh, C = z.size(0), self.T, self.H, self.dh, self.C
        h = F.layer_norm(z, (C,), b['ln1g'], b['ln1b'])
        q = (h @ b['WQ']).view(B, T, H, dh).transpose(1, 2)
        k = (h @ b['WK']).view(B, T, H, dh).transpose(1, 2)
        v = (h @ b['WV']).view(B, T, H, dh).transpose(1, 2)
        a = torch.softmax(((q @ k.transpose(-2, -1)) / math.sqrt(dh))
                          .masked_fill(~self.cmask, float('-inf')), -1)
        return (a @ v).transpose(1, 2).reshape(B, T, C) @ b['WO']

    def bffn(self, b, z):
        h = F.layer_norm(z, (self.C,), b['ln2g'], b['ln2b'])
        return F.gelu(h @ b['fc'] + b['fcb']) @ b['pj'] + b['pjb']

    def nc_force(self, zc):
        return torch.stack([self.battn(b, zc[k]) + self.bffn(b, zc[k])
                            for k, b in enumerate(self.blocks)], 0)

    def force(self, zc, xin, cg=False):
        zr = zc if (cg and zc.requires_grad) else zc.detach().requires_grad_(True)
        below = torch.cat([xin[None], zr[:-1]], 0)
        f = -self.gamma * (zr - below) + self.nc_force(zr) - self.c * zr
        up = self.gamma * (zr[1:] - zr[:-1])
        return f + torch.cat([up, torch.zeros_like(zr[:1])], 0)


# our SpringStack's block parameters → the port's, in the port's order
OURS_TO_PORT = (("w_o", "WO"), ("ln1_g", "ln1g"), ("ln1_b", "ln1b"), ("ln2_g", "ln2g"),
                ("ln2_b", "ln2b"), ("w_fc", "fc"), ("b_fc", "fcb"), ("w_proj", "pj"),
                ("b_proj", "pjb"))


def load_ours(st, state):
    """Copy a ``credit_assign.ep_stack.dynamics.SpringStack`` state dict into the port (the fused
    W_Q | W_K | W_V is split), so both compute on the same weights."""
    C = st.C
    with torch.no_grad():
        st.tok.copy_(state["tok"])
        st.pos.copy_(state["pos"])
        st.Wh.copy_(state["head"])
        for k, b in enumerate(st.blocks):
            qkv = state[f"blocks.{k}.w_qkv"]
            for i, name in enumerate(("WQ", "WK", "WV")):
                b[name].copy_(qkv[:, i * C:(i + 1) * C])
            for ours, theirs in OURS_TO_PORT:
                b[theirs].copy_(state[f"blocks.{k}.{ours}"])


def relax(st, z, xin, steps, eps):
    for _ in range(steps):
        with torch.no_grad():
            z = z + eps * st.force(z, xin).detach()
    return z.detach()


def ce(st, z, y):
    return F.cross_entropy((z[-1] @ st.Wh).reshape(-1, st.vocab), y.reshape(-1))


def grad_ce_state(st, z, y):
    p = torch.softmax(z[-1] @ st.Wh, -1)
    gK = (p - F.one_hot(y, p.size(-1)).to(z.dtype)) @ st.Wh.t() / y.numel()
    g = torch.zeros_like(z)
    g[-1] = gK
    return g


def ep_a(st, zs, xin, y, r, T2max, eps, K=10, exit_mult=5.0):
    Zp, Zm = zs.clone(), zs.clone()
    a_prev = a_best = None
    inc_min, t_best = float('inf'), 0
    for t in range(1, T2max + 1):
        with torch.no_grad():
            for Z, sg in ((Zp, +r), (Zm, -r)):
                f = st.force(Z, xin) - sg * grad_ce_state(st, Z, y)
                v = (Z - zs).contiguous()
                Jv = torch.autograd.functional.jvp(st.nc_force, zs, v)[1]
                JTv = torch.autograd.functional.vjp(st.nc_force, zs, v)[1]
                Z += eps * (f - (Jv - JTv))
        if t % K == 0 or t == T2max:
            a_t = (Zm - Zp) / (2 * r)
            if not torch.isfinite(a_t).all():
                break
            if a_prev is not None:
                inc = (a_t - a_prev).norm().item()
                if inc < inc_min:
                    inc_min, a_best, t_best = inc, a_t, t
                elif inc > exit_mult * inc_min and t >= 3 * K:
                    break
            a_prev = a_t
    return (a_best if a_best is not None else a_prev).detach(), t_best


def ep_grads(st, idx, y, T1, eps, r, T2max):
    xin = st.embed(idx).detach()
    z0 = xin[None].repeat(st.K, 1, 1, 1)
    zs = relax(st, z0, xin, T1, eps)
    res = (relax(st, zs, xin, 1, eps) - zs).norm().item() / (zs.norm().item() + 1e-9)
    a, tb = ep_a(st, zs, xin, y, r, T2max, eps)
    with torch.enable_grad():
        x2 = st.embed(idx)
        f = st.force(zs.detach(), x2, cg=True)
        g = torch.autograd.grad((a * f).sum(), st.block, allow_unused=True)
    return {id(p): gv for p, gv in zip(st.block, g, strict=True)}, res, tb


def bptt_grads(st, idx, y, T1, eps):
    xin = st.embed(idx)
    z = (xin.detach().requires_grad_(True) * 0 + xin)[None].repeat(st.K, 1, 1, 1)
    for _ in range(T1):
        z = z + eps * st.force(z, xin, cg=True)
    g = torch.autograd.grad(ce(st, z, y), st.allp, allow_unused=True)
    return {id(p): gv for p, gv in zip(st.allp, g, strict=True)}


def groups(st):
    out = {'all': st.block}
    for k, b in enumerate(st.blocks):
        out[f'block{k}'] = list(b.values())
    out['embeddings'] = [st.tok, st.pos]
    return out


def cos(ga, gb, ps):
    keep = [p for p in ps if ga.get(id(p)) is not None and gb.get(id(p)) is not None]
    if not keep:
        return float('nan')
    va = torch.cat([ga[id(p)].reshape(-1) for p in keep])
    vb = torch.cat([gb[id(p)].reshape(-1) for p in keep])
    return (va @ vb / (va.norm() * vb.norm() + 1e-12)).item()
