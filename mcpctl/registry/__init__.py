"""MCP registries: the official API, file registries, the discovery cache, conversion.

from mcpctl.registry import RegistryClient, DiscoveryCache, entry_from_server_json
"""

from mcpctl.errors import RegistryError
from mcpctl.registry.cache import DiscoveryCache
from mcpctl.registry.client import RegistryClient, load_file_registry
from mcpctl.registry.convert import Conversion, MissingInput, entry_from_server_json
from mcpctl.registry.records import Record, record_from_json
from mcpctl.registry.search import SearchHit

__all__ = [
    "Conversion",
    "DiscoveryCache",
    "MissingInput",
    "Record",
    "RegistryClient",
    "RegistryError",
    "SearchHit",
    "entry_from_server_json",
    "load_file_registry",
    "record_from_json",
]
