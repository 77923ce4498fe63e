"""``nki.isa.constants``: the ISA's enumerations under the module name real kernels import them from
(``from nki.isa.constants import dge_mode, oob_mode``); the same classes as ``nki.isa.<name>``."""

from nki.isa import dge_mode as dge_mode
from nki.isa import dma_engine as dma_engine
from nki.isa import engine as engine
from nki.isa import matmul_perf_mode as matmul_perf_mode
from nki.isa import nc_version as nc_version
from nki.isa import oob_mode as oob_mode
from nki.isa import reduce_cmd as reduce_cmd
