"""Reads behind the dashboard pages, each scoped to one owner: one module per page.

`browse_query` and `browse` (the memory browser), `overview`, `decay`, `detail` (a memory's page).
"""

from dashboard.selectors.browse import COUNT_CAP, SEARCH_RELATIVE_CUTOFF, SEARCH_TOP_K, memory_agents, memory_browse
from dashboard.selectors.browse_query import SORTS, BrowseQuery, browse_query_parse
from dashboard.selectors.decay import decay_curves, decay_policy, strength_distribution
from dashboard.selectors.detail import memory_conflicts, memory_relations, memory_strength_series
from dashboard.selectors.overview import memory_activity, overview_metrics

__all__ = [
    "COUNT_CAP",
    "SEARCH_RELATIVE_CUTOFF",
    "SEARCH_TOP_K",
    "SORTS",
    "BrowseQuery",
    "browse_query_parse",
    "decay_curves",
    "decay_policy",
    "memory_activity",
    "memory_agents",
    "memory_browse",
    "memory_conflicts",
    "memory_relations",
    "memory_strength_series",
    "overview_metrics",
    "strength_distribution",
]
