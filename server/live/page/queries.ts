/** The live status page's two operations: the initial list (HTTP) and the subscription (graphql-ws). */

const CONSUMER = `consumer {
        __typename
        ... on VolumeAllocationConsumer { allocationId jobId taskGroup nodeName }
        ... on VolumeServerConsumer { serverId name }
        ... on VolumeHostConsumer { hostName }
      }`;

const VOLUME = `id backend { id } namespace nativeId name status
    attachments { id state ${CONSUMER} }`;

const OMITTED = 'omittedBackends { backend { id } reason code message }';

/** Largest page the list asks for; the page follows `endCursor` up to {@link MAX_LIST_PAGES} pages. */
export const LIST_PAGE_SIZE = 50;
export const MAX_LIST_PAGES = 20;

/** The list, and on each page the caller's namespace per backend with its name (OpenStack: the token's project), shown instead of ids. */
export const LIST_QUERY = `query LiveVolumes($after: String) {
  volumes(first: ${LIST_PAGE_SIZE}, after: $after) {
    nodes { ${VOLUME} }
    pageInfo { hasNextPage endCursor }
    ${OMITTED}
  }
  storageBackends { id callerNamespace { id name } }
}`;

/** One volume again, for the consumer names an event cannot carry (a Nova server's name needs a Nova read). */
export const VOLUME_QUERY = `query LiveVolume($id: ID!) {
  volume(id: $id) { ${VOLUME} }
}`;

export const SUBSCRIPTION = `subscription LiveVolumeChanges($since: String) {
  volumeChanged(since: $since) {
    type cursor observedAt volumeId previousStatus changedFields
    volume { ${VOLUME} }
    attachment { id state ${CONSUMER} }
    ${OMITTED}
  }
}`;

const PROBLEM = `id kind severity summary volumeId backend { id } scope
    volume { id name nativeId }
    remedies { action does who cli mutation { document variables } }`;

/** Open problems at start (the volume doctor's; `omittedBackends` says which backends it has not diagnosed). */
export const PROBLEMS_QUERY = `query LiveProblems {
  volumeProblems(first: 200) { nodes { ${PROBLEM} } ${OMITTED} }
}`;

/** Problems opening, changing and resolving. */
export const PROBLEM_SUBSCRIPTION = `subscription LiveProblemChanges {
  volumeProblemChanged { type cursor problem { ${PROBLEM} } }
}`;
