"""KIP-1242 rules: ApiVersions v5 carries the cluster and node a client means to reach, and a
broker that is not that node says so (REBOOTSTRAP_REQUIRED) instead of serving a misrouted client.

The KIP's wiki text is not stored here; the rules rest on Apache Kafka 4.4.0, where the KIP
shipped: the schema's comments and field docs, `ApiVersionsRequest.isValid` and
`KafkaApis.handleApiVersionsRequest` (read from the 4.4.0 jars' bytecode).
"""

from __future__ import annotations

from kconform.rules.model import Known, Level, Rule

_SCHEMA = "clients/src/main/resources/common/message/ApiVersionsRequest.json (4.4.0)"
_IS_VALID = "clients/src/main/java/org/apache/kafka/common/requests/ApiVersionsRequest.java isValid"
_APIS = ("core/src/main/scala/kafka/server/KafkaApis.scala handleApiVersionsRequest "
         "(clusterIdOrNodeIdIsInvalid)")  # fmt: skip
_SECTION = "ApiVersions v5"
_NC = (
    "clients/src/main/java/org/apache/kafka/clients/NetworkClient.java "
    "handleInitiateApiVersionRequests, handleApiVersionsResponse (4.4.0)"
)
_KGO = (
    "franz-go v1.22.3 pkg/kgo/broker.go (the ApiVersions request), client.go rebootstrapMisrouted"
)
_KFAKE = "franz-go pkg/kfake 18_api_versions.go (snapshot v0.0.0-20260918054303-01f206a7e32c)"

RULES = (
    Rule("kip1242.apiversions.identity_pair", Level.MUST, "KIP-1242", _SECTION,
         "",
         "A v5 request carrying a ClusterId with NodeId -1, or a NodeId with a null ClusterId, "
         "is answered INVALID_REQUEST: the schema asks for both or neither (\"Provide both "
         "ClusterId and NodeId, if known\").",
         behaviour="B.5",
         known=(Known("Apache 4.4.0", "conforms", f"{_IS_VALID}; {_APIS}; {_SCHEMA}"),
                Known("kfake 2026-09-18", "conforms", _KFAKE))),
    Rule("kip1242.apiversions.identity_absent", Level.MUST, "KIP-1242", _SECTION,
         "",
         "A v5 request with neither (ClusterId null, NodeId -1, the schema's defaults: a client "
         "that does not know them yet) is answered NONE with the broker's api ranges.",
         behaviour="B.5",
         known=(Known("Apache 4.4.0", "conforms", f"{_IS_VALID}; {_APIS}"),
                Known("kfake 2026-09-18", "conforms", _KFAKE))),
    Rule("kip1242.apiversions.identity_matched", Level.MUST, "KIP-1242", _SECTION,
         "",
         "A v5 request carrying the broker's own cluster id (as its Metadata reports it) and "
         "its own node id is answered NONE with the broker's api ranges.",
         behaviour="B.5",
         known=(Known("Apache 4.4.0", "conforms", _APIS),
                Known("kfake 2026-09-18", "conforms (its cluster id is \"kfake\", not a Uuid)",
                      _KFAKE))),
    Rule("kip1242.apiversions.misrouted_rebootstrap", Level.MUST, "KIP-1242", _SECTION,
         "",
         "A v5 request whose ClusterId is not the broker's cluster id, or whose NodeId is not "
         "the broker's node id, is answered REBOOTSTRAP_REQUIRED (129): the client reached "
         "another node than the one it meant (\"Version 5 introduces ClusterId and NodeId "
         "checking and REBOOTSTRAP_REQUIRED error\").",
         behaviour="B.5",
         known=(Known("Apache 4.4.0", "conforms (error body: no ApiKeys)",
                      f"{_APIS}; ApiVersionsRequest.getErrorResponse; {_SCHEMA}"),
                Known("kfake 2026-09-18", "conforms", _KFAKE))),
    # --- client ---------------------------------------------------------------------------------
    Rule("kip1242.client.identity_correct", Level.MUST, "KIP-1242", _SECTION,
         "",
         "A client that names a cluster and node in ApiVersions v5 names both, the cluster id "
         "the cluster's Metadata gave it and the node id of the broker that connection is to "
         "(the schema: \"The cluster ID the client intends to connect to\", \"The node ID the "
         "client intends to connect to\"); naming neither is allowed (\"if known\").",
         behaviour="B.5",
         known=(Known("Java client 4.4.0", "conforms (metadata.cluster.check.enable, default "
                      "true; not with metadata.recovery.strategy=none; never to a bootstrap "
                      "address)", _NC),
                Known("franz-go v1.22.3", "conforms (seeds get neither)", _KGO))),
    Rule("kip1242.client.misrouted_disconnects", Level.MUST, "KIP-1242", _SECTION,
         "",
         "A client answered REBOOTSTRAP_REQUIRED to its ApiVersions v5 sends nothing more on "
         "that connection and closes it (the error says the node is not the one it named: "
         "\"Client metadata is stale. The client should rebootstrap\", Errors.java).",
         behaviour="B.5",
         known=(Known("Java client 4.4.0", "conforms (closes every connection and rebootstraps "
                      "when metadata.recovery.strategy=rebootstrap; closes that one otherwise)",
                      _NC),
                Known("franz-go v1.22.3", "conforms (drops every discovered broker, refreshes "
                      "metadata from the seeds)", _KGO))),
)  # fmt: skip
