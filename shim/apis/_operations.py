"""An authorized-operations field that was not asked for keeps the schema default, -2147483648.

The bitfields themselves come from ``RequestContext.authorized_operations`` (Kafka's
AuthHelper.authorizedOperations): the authorizer's answer, or every operation
``shim.security.authorizer.SUPPORTED_OPERATIONS`` lists for the resource type without one.
"""

NOT_REQUESTED = -(2**31)
