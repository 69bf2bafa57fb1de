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
         "ClientSoftwareVersion inside the KIP's pattern.", ruling=22, behaviour="E.1",
         known=(Known("segmentio/kafka-go v0.4.51", "sends ApiVersions v0, with no name or "
                      "version, first on every connection, and reconnects after a loss when its "
                      "metadata timer next fires (within MetadataTTL, 6 s)",
                      "kafka-go protocol/apiversions/apiversions.go (Request: max=v2, no fields); "
                      "transport.go connGroup.connect, connPool.discover"),
                Known("franz-go v1.19.4-v1.21.3", "after a connection reset during ApiVersions, "
                      "retries straight at ApiVersions v0, with no name or version (and leaks "
                      "the reset connection)", "franz-go CHANGELOG v1.21.4 (commit c0f89d33)",
                      bug="fg-reset-retry-drops-to-v0", fixed_in="v1.21.4",
                      case="kip511.client.software_identity_after_reset"),
                Known("franz-go v1.0.0-v1.20.7", "only the first connection to a broker opens with "
                      "ApiVersions, so the broker sees later connections as software 'unknown' "
                      "and name/version selectors miss them", "franz-go CHANGELOG v1.21.0 (commit "
                      "a5a7c6f2, #1296)", bug="fg-apiversions-first-connection-only",
                      fixed_in="v1.21.0", case="kip511.client.software_identity"),
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
                Known("franz-go up to v1.22.3", "sends a configured name or version with spaces, "
                      "underscores, slashes or nothing at all unchecked, and Apache refuses "
                      "every connection", "franz-go commit 154335fe (on master; v1.22.3's "
                      "config.go validate() still checks the length only)",
                      bug="fg-invalid-software-name-unchecked",
                      fixed_in="unfixed in a release (master commit 154335fe)",
                      case="kip511.client.software_identity_apache",
                      missed="Affected (record) up to v1.21.5; measured affected v1.19.5, v1.20.7, "
                      "v1.21.3, v1.21.4. kip511.client.software_identity_apache judges the "
                      "baseline run, where franz-go sends its defaults, which are always valid: "
                      "name \"kgo\" (config.go defaultCfg) and softwareVersion(), which returns "
                      "the module version only when it matches "
                      "`^[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?$` and \"unknown\" otherwise "
                      "(config.go reVersion/softwareVersion, line 525-538 in v1.21.3, 602-615 in "
                      "v1.22.3). The bug needs an application-supplied "
                      "kgo.SoftwareNameAndVersion(name, version) with a space, underscore, slash "
                      "or empty string, which cfg.validate() only bounds by length (256). The "
                      "driver never sets it: main.go options() maps only client.id, "
                      "enable.metrics.push, linger.ms and allow.auto.create.topics, and the "
                      "driver contract has no property for a software name. So the pass on "
                      "v1.21.3/v1.21.4 says nothing; the non-strict on v1.19.5/v1.20.7 is "
                      "fg-apiversions-first-connection-only. Record correction from source: the "
                      "fix 154335fe (validSoftwareNameVersion in cfg.validate) is on the master "
                      "snapshot but in no measured release; v1.21.7 and v1.22.3 config.go "
                      "validate() still has only the length check (v1.22.3 lines 267-293), so "
                      "they are affected too and 'up to v1.21.5' understates the range."),
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
                Known("franz-go v1.22.3", "reads an UNSUPPORTED_VERSION answer listing keys but "
                      "not ApiVersions as the broker's whole key table and never sends "
                      "ApiVersions again (kip511.client.unsupported_version.retry_v0_other_keys "
                      "fails)", "franz-go pkg/kgo/broker.go (v1.22.3): the default arm of its "
                      "UNSUPPORTED_VERSION handling, 'The broker replied with all keys; nothing "
                      "to downgrade to, we use them.'"),
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
    Rule("kip511.client.fallback.terminates", Level.SHOULD, "KIP-511", "Proposed Changes",
         "it checks the ApiKeys to get the supported versions or default to versions 0 if not "
         "present. Then, it restarts the process with this version.",
         "An UNSUPPORTED_VERSION answer whose ApiVersions maximum is not below the version it "
         "refused (or is negative) does not let the client go lower: the client then sends a "
         "bounded number of ApiVersions on that connection (it falls back to v0 or gives the "
         "connection up) and does not reconnect in a storm.", ruling=15, behaviour="B.2",
         known=(Known("Java client 3.7.0-4.4.0", "retries at the advertised maximum whatever it "
                      "is, so an answer advertising the version refused loops on that connection",
                      "clients/.../NetworkClient.java handleApiVersionsResponse "
                      "(`new ApiVersionsRequest.Builder(maxApiVersion)`, no check it is lower)"),
                Known("kafka-python 3.0.12", "takes min(version sent, advertised maximum) and "
                      "resends the same ApiVersions until its timeout",
                      "kafka/net/connection.py _get_api_versions"),
                Known("franz-go v1.19.1-v1.21.3", "after UNSUPPORTED_VERSION it retries at "
                      "whatever ApiVersions version the answer advertises, so one not below the "
                      "version sent (or a negative one) loops for ever",
                      "franz-go commit cd381f4c (broker.go requestAPIVersions: v1.21.4 takes the "
                      "hint only if `v >= 0 && v < maxVersion`)",
                      bug="fg-apiversions-downgrade-loop", fixed_in="v1.21.4",
                      case="kip511.client.unsupported_version.no_loop"),)),
    Rule("kip511.client.identity_is_library", Level.MUST, "KIP-511", "Public Interfaces",
         "The version of the client.",
         "ClientSoftwareVersion is the version of the client library that speaks the protocol "
         "(the one the application loaded, or the library it embeds when it names that one), "
         "not the application's version or a placeholder.", ruling=16, behaviour="E.1",
         known=(Known("Sarama v1.30.0-v1.46.3", "ClientSoftwareVersion carries the "
                      "application's module version, not Sarama's ('dev' when the application "
                      "has none, as a local build)", "IBM/sarama#3415 (commit f74109c3, "
                      "version.go reads bi.Main.Version instead of Sarama's entry in bi.Deps)",
                      bug="sarama-reports-app-version", fixed_in="v1.47.0",
                      case="kip511.client.software_version_is_library"),)),
    Rule("kip511.client.invalid_request", Level.MUST, "KIP-511", "Validation",
         "When the client receives an INVALID_REQUEST, it must error out and to close the "
         "connection and log the error",
         "A client answered INVALID_REQUEST to its ApiVersions closes that connection.",
         behaviour="B.1",
         known=(Known("franz-go up to v1.21.5", "never reads the ApiVersions error code, so "
                      "INVALID_REQUEST for its name counts as success and shows later as io.EOF "
                      "retries", "franz-go commit 582e0f21 (PR #1381; CHANGELOG v1.21.6)",
                      bug="fg-apiversions-error-code-ignored", fixed_in="v1.21.6",
                      case="kip511.client.invalid_request_with_keys"),)),
)  # fmt: skip
