"""KIP-511 rules: the client's software name and version in ApiVersions, and version fallback."""

from __future__ import annotations

from kconform.rules.model import Known, Level, Rule

_PATTERN_SRC = "clients/src/main/java/org/apache/kafka/common/requests/ApiVersionsRequest.java"
_CONTEXT_SRC = "clients/src/main/java/org/apache/kafka/common/requests/RequestContext.java"

RULES = (
    # --- broker ---------------------------------------------------------------------------------
    Rule("kip511.apiversions.schema", Level.MUST, "KIP-511", "Proposed Changes",
         "",
         "Every ApiVersions version the broker advertises decodes as the schema declares it, and "
         "v3+ carries ClientSoftwareName and ClientSoftwareVersion.",
         behaviour="A.1"),
    Rule("kip511.apiversions.response_header_v0", Level.MUST, "KIP-511", "Proposed Changes",
         "", "An ApiVersions response always uses response header v0, also at flexible versions "
         "(no tag buffer), so that a client which does not know the broker's version can read it.",
         behaviour="A.3",
         known=(Known("Apache 3.7.0-4.1.0", "conforms",
                      "generator/.../ApiMessageTypeGenerator.java generateHeaderVersion"),)),
    Rule("kip511.apiversions.software.valid_accepted", Level.MUST, "KIP-511", "Validation",
         "", "A v3+ request whose name and version are well formed is answered NONE with the "
         "broker's api ranges.", behaviour="B.1"),
    Rule("kip511.apiversions.software.invalid_rejected", Level.MUST, "KIP-511", "Validation",
         "",
         "A v3+ request whose ClientSoftwareName or ClientSoftwareVersion is empty or has a "
         "character outside the KIP's pattern is answered INVALID_REQUEST; closing the connection "
         "is the client's job, so the broker keeps it open.",
         ruling=9, behaviour="B.1",
         known=(Known("Apache 3.7.0-4.1.0", "conforms (stricter pattern, see ruling 9)",
                      _PATTERN_SRC + " SOFTWARE_NAME_VERSION_PATTERN"),)),
    Rule("kip511.apiversions.software.kip_pattern_only", Level.INFO, "KIP-511", "Validation",
         "([\\.\\-_a-zA-Z0-9])+",
         "Names inside the KIP's pattern but outside Apache's stricter one (an underscore, a "
         "leading '-'): accepting or rejecting them is recorded, not judged.",
         ruling=9, behaviour="B.1",
         known=(Known("Apache 3.7.0-4.1.0", "rejects them (INVALID_REQUEST)", _PATTERN_SRC),)),
    Rule("kip511.apiversions.unsupported_version.fallback", Level.MUST, "KIP-511",
         "Proposed Changes",
         "the broker also populates the api_versions field with the supported version of the "
         "ApiVersionsRequest",
         "An ApiVersions request at a version above the broker's maximum is answered with a v0 "
         "body, UNSUPPORTED_VERSION, and ApiKeys holding ApiVersions' own range only.",
         behaviour="B.2",
         known=(Known("Apache 3.7.0-4.1.0", "conforms",
                      _CONTEXT_SRC + " parseRequest; ApiVersionsRequestTest"),)),
    Rule("kip511.apiversions.unsupported_version.retry_works", Level.MUST, "KIP-511",
         "Proposed Changes",
         "", "The range the fallback response advertises for ApiVersions is usable: a retry at "
         "its maximum is answered NONE.", behaviour="B.2"),
    # --- client ---------------------------------------------------------------------------------
    Rule("kip511.client.software_identity", Level.MUST, "KIP-511", "Proposed Changes",
         "([\\.\\-_a-zA-Z0-9])+",
         "A client sends ApiVersions v3+ with a non-empty ClientSoftwareName and "
         "ClientSoftwareVersion inside the KIP's pattern.", behaviour="E.1",
         known=(Known("franz-go v1.19.4-v1.21.3", "after a connection reset during ApiVersions, "
                      "retries straight at ApiVersions v0, with no name or version (and leaks "
                      "the reset connection)", "franz-go CHANGELOG v1.21.4 (commit c0f89d33)",
                      bug="fg-reset-retry-drops-to-v0", fixed_in="v1.21.4",
                      case="kip511.client.software_identity"),
                Known("Sarama v1.30.0-v1.34.x", "takes its version from the main module's build "
                      "info, which is empty or '(devel)' in a local build, and Apache refuses "
                      "that with INVALID_REQUEST", "IBM/sarama#2291 (commit d69f9b22)",
                      bug="sarama-devel-version-invalid", fixed_in="v1.35.0",
                      case="kip511.client.software_identity"))),
    Rule("kip511.client.software_identity_apache", Level.SHOULD, "KIP-511", "Validation", "",
         "A client's name and version also match Apache's stricter pattern, so that Apache "
         "brokers register them.", ruling=9, behaviour="B.1",
         known=(Known("librdkafka 2.5+", "conforms (sanitizes to [a-zA-Z0-9.-])",
                      "src/rdkafka_conf.c rd_kafka_sw_str_sanitize_inplace"),
                Known("franz-go up to v1.21.5", "sends a configured name or version with spaces, "
                      "underscores, slashes or nothing at all unchecked, and Apache refuses "
                      "every connection", "franz-go commit 154335fe",
                      bug="fg-invalid-software-name-unchecked",
                      fixed_in="after v1.21.5 (release not pinned)",
                      case="kip511.client.software_identity_apache"),
                Known("Redpanda Console builds since commit 7f436c34 (2022)", "names itself "
                      "'RP Console', whose space Apache refuses with INVALID_REQUEST, which "
                      "breaks its broker version lookup", "redpanda-data/console#390",
                      bug="redpanda-console-name-with-space",
                      fixed_in="not identified (the PR linked from console#390)",
                      case="kip511.client.software_identity_apache"))),
    Rule("kip511.client.fallback", Level.MUST, "KIP-511", "Proposed Changes",
         "",
         "On UNSUPPORTED_VERSION a client retries ApiVersions at the maximum the response "
         "advertises for ApiVersions, or at v0 if it advertises none.", behaviour="B.2",
         known=(Known("Java client 3.7.0-4.1.0", "conforms",
                      "clients/.../NetworkClient.java handleApiVersionsResponse"),
                Known("franz-go up to v1.19.0", "reads the UNSUPPORTED_VERSION answer as a full "
                      "key list and concludes the broker supports ApiVersions alone",
                      "franz-go commit 50aa74f1", bug="fg-apiversions-fallback-misparse",
                      fixed_in="v1.19.1", case="kip511.client.unsupported_version.retry_max"),
                Known("Sarama v1.30.0-v1.46.1", "fails on the v0 body a pre-2.4 broker answers "
                      "to ApiVersions v3 ('not enough bytes') instead of retrying at the "
                      "version it advertises", "IBM/sarama#3328 (commit 26dc2e7c)",
                      bug="sarama-v0-fallback-unparsed", fixed_in="v1.46.2",
                      case="kip511.client.unsupported_version.retry_max"),
                Known("Sarama v1.30.0-v1.46.1", "having read UNSUPPORTED_VERSION, goes on "
                      "decoding the answer as flexible v3 rather than in the v0 layout",
                      "IBM/sarama#3337 (commit c0081659)",
                      bug="sarama-flexible-decode-on-unsupported", fixed_in="v1.46.2",
                      case="kip511.client.unsupported_version.retry_max"))),
    Rule("kip511.client.invalid_request", Level.MUST, "KIP-511", "Validation",
         "When the client receives an INVALID_REQUEST, it must error out and to close the "
         "connection and log the error",
         "A client answered INVALID_REQUEST to its ApiVersions closes that connection.",
         behaviour="B.1",
         known=(Known("franz-go up to v1.21.x", "never reads the ApiVersions error code, so "
                      "INVALID_REQUEST for its name counts as success and shows later as io.EOF "
                      "retries", "franz-go commit 582e0f21 (PR #1381)",
                      bug="fg-apiversions-error-code-ignored",
                      fixed_in="unfixed (on master, in no release yet)",
                      case="kip511.client.invalid_request"),)),
)  # fmt: skip
