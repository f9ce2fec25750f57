"""The four rule books. Importing this package registers them with `find_ruleset`."""

from rules.rulebooks.act2005 import ACT2005
from rules.rulebooks.mbs2020 import MBS2020, RWS2018
from rules.rulebooks.nz1998 import NZ1998

__all__ = ["ACT2005", "MBS2020", "NZ1998", "RWS2018"]
