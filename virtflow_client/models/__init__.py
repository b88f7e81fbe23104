""" Contains all the data models used in inputs/outputs """

from .activity_timeouts import ActivityTimeouts
from .blocking_budget import BlockingBudget
from .booked_spare import BookedSpare
from .booking_info import BookingInfo
from .booking_window import BookingWindow
from .bookings_view import BookingsView
from .budget_refusal import BudgetRefusal
from .cancel_accepted import CancelAccepted
from .cluster_list import ClusterList
from .cluster_view import ClusterView
from .code import Code
from .drain_info import DrainInfo
from .drain_info_outcome import DrainInfoOutcome
from .drain_info_policy import DrainInfoPolicy
from .drain_node_result import DrainNodeResult
from .drain_outcome import DrainOutcome
from .drain_policy import DrainPolicy
from .event_type import EventType
from .explain_body import ExplainBody
from .explain_body_existing_vms_type_0_item import ExplainBodyExistingVmsType0Item
from .explain_body_hosts_type_0_item import ExplainBodyHostsType0Item
from .explain_body_policy_type_0 import ExplainBodyPolicyType0
from .explain_body_request import ExplainBodyRequest
from .explain_result import ExplainResult
from .explain_result_decision import ExplainResultDecision
from .field_error import FieldError
from .healthz_response_healthz import HealthzResponseHealthz
from .hold import Hold
from .host_bookings import HostBookings
from .host_move import HostMove
from .match_expression import MatchExpression
from .match_expression_operator import MatchExpressionOperator
from .near import Near
from .near_info import NearInfo
from .near_record import NearRecord
from .node_affinity import NodeAffinity
from .phase import Phase
from .placed_topology import PlacedTopology
from .placed_topology_domains import PlacedTopologyDomains
from .preferred_term import PreferredTerm
from .prepare_accepted import PrepareAccepted
from .prepare_body import PrepareBody
from .prepare_body_annotations import PrepareBodyAnnotations
from .prepare_body_devices import PrepareBodyDevices
from .prepare_body_node_selector import PrepareBodyNodeSelector
from .prepare_body_on_unhealthy import PrepareBodyOnUnhealthy
from .problem import Problem
from .problem_inventories_type_0 import ProblemInventoriesType0
from .rehearsal_info import RehearsalInfo
from .rehearsal_info_outcome import RehearsalInfoOutcome
from .release_request import ReleaseRequest
from .replacement import Replacement
from .reservation import Reservation
from .reservation_devices import ReservationDevices
from .schedule_accepted import ScheduleAccepted
from .schedule_body import ScheduleBody
from .scheduled_host import ScheduledHost
from .spare_event import SpareEvent
from .spare_event_data import SpareEventData
from .spare_page import SparePage
from .spare_status import SpareStatus
from .spare_summary import SpareSummary
from .spare_view import SpareView
from .step_record import StepRecord
from .task_released import TaskReleased
from .task_result import TaskResult
from .task_result_status import TaskResultStatus
from .toleration import Toleration
from .toleration_effect_type_0 import TolerationEffectType0
from .toleration_operator import TolerationOperator
from .topology_info import TopologyInfo
from .topology_info_domains import TopologyInfoDomains
from .topology_spread_constraint import TopologySpreadConstraint
from .topology_spread_constraint_when_unsatisfiable import TopologySpreadConstraintWhenUnsatisfiable
from .unanswered_ledger import UnansweredLedger
from .vm_facts import VmFacts
from .warm_info import WarmInfo
from .warm_pool_list import WarmPoolList
from .warm_pool_view import WarmPoolView
from .warm_spare import WarmSpare
from .warm_spare_phase import WarmSparePhase
from .window import Window
from .window_body import WindowBody
from .window_changed import WindowChanged

__all__ = (
    "ActivityTimeouts",
    "BlockingBudget",
    "BookedSpare",
    "BookingInfo",
    "BookingsView",
    "BookingWindow",
    "BudgetRefusal",
    "CancelAccepted",
    "ClusterList",
    "ClusterView",
    "Code",
    "DrainInfo",
    "DrainInfoOutcome",
    "DrainInfoPolicy",
    "DrainNodeResult",
    "DrainOutcome",
    "DrainPolicy",
    "EventType",
    "ExplainBody",
    "ExplainBodyExistingVmsType0Item",
    "ExplainBodyHostsType0Item",
    "ExplainBodyPolicyType0",
    "ExplainBodyRequest",
    "ExplainResult",
    "ExplainResultDecision",
    "FieldError",
    "HealthzResponseHealthz",
    "Hold",
    "HostBookings",
    "HostMove",
    "MatchExpression",
    "MatchExpressionOperator",
    "Near",
    "NearInfo",
    "NearRecord",
    "NodeAffinity",
    "Phase",
    "PlacedTopology",
    "PlacedTopologyDomains",
    "PreferredTerm",
    "PrepareAccepted",
    "PrepareBody",
    "PrepareBodyAnnotations",
    "PrepareBodyDevices",
    "PrepareBodyNodeSelector",
    "PrepareBodyOnUnhealthy",
    "Problem",
    "ProblemInventoriesType0",
    "RehearsalInfo",
    "RehearsalInfoOutcome",
    "ReleaseRequest",
    "Replacement",
    "Reservation",
    "ReservationDevices",
    "ScheduleAccepted",
    "ScheduleBody",
    "ScheduledHost",
    "SpareEvent",
    "SpareEventData",
    "SparePage",
    "SpareStatus",
    "SpareSummary",
    "SpareView",
    "StepRecord",
    "TaskReleased",
    "TaskResult",
    "TaskResultStatus",
    "Toleration",
    "TolerationEffectType0",
    "TolerationOperator",
    "TopologyInfo",
    "TopologyInfoDomains",
    "TopologySpreadConstraint",
    "TopologySpreadConstraintWhenUnsatisfiable",
    "UnansweredLedger",
    "VmFacts",
    "WarmInfo",
    "WarmPoolList",
    "WarmPoolView",
    "WarmSpare",
    "WarmSparePhase",
    "Window",
    "WindowBody",
    "WindowChanged",
)
