"""Study 004's readings of its unknowns, shared by the orchestrator, the checks and the report
(scenarios/p4_atm/README.md gives each value's evidence)."""

from __future__ import annotations

import dataclasses

from tcplab.reproduce.p4.atm import mss_freebsd, mss_plain

__all__ = ["VARIANTS", "Variant"]


@dataclasses.dataclass(frozen=True)
class Variant:
    """One reading of the unknowns that matter (README A4, A5, A8)."""

    name: str
    f: float = 1.0
    """Effective UBR buffer = f × the configured one."""
    unit: str = "cell"
    """How the analyser counts CBR Mb/s: 53-byte cells or 48-byte payload."""
    mss_rule: str = "freebsd"

    def mss(self, mtu: int) -> int:
        return mss_freebsd(mtu) if self.mss_rule == "freebsd" else mss_plain(mtu)

    def cells(self, configured: int) -> int:
        return max(1, int(round(self.f * configured)))


VARIANTS = (
    Variant("as shipped (f = 1, CBR in cells, FreeBSD MSS)"),
    Variant("effective buffer f = 0.5", f=0.5),
    Variant("effective buffer f = 0.625", f=0.625),
    Variant("effective buffer f = 0.75", f=0.75),
    Variant("CBR counted in payload", unit="payload"),
    Variant("MSS = MTU − 40", mss_rule="plain"),
)
"""The shipped reading first; each other changes one unknown."""

