"""Legacy string values of ISA operands and the 0.7 enum members they became (deprecations.md: a 2.x test's
``perf_mode="double_row_gen3"`` is ``nisa.matmul_perf_mode.double_row``; isa.md §0: the enum's values are the
member names). The legacy simulator reads them as the current values, the migration writes the members."""

from __future__ import annotations

# (instruction, operand) -> legacy value -> (enum, member)
LEGACY_OPERAND_VALUES: dict[tuple[str, str], dict[str, tuple[str, str]]] = {
    ("nc_matmul", "perf_mode"): {"double_row_gen3": ("matmul_perf_mode", "double_row")},
}
