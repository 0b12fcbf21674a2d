//! gRPC's reading of an HTTP response that carries no `grpc-status`: a proxy or load balancer
//! in front of the server answered with an HTTP error status.

use http::StatusCode;
use tonic::Code;

/// The gRPC code of a response without `grpc-status` whose HTTP status is `status`, by gRPC's
/// "HTTP to gRPC Status Code Mapping" (`http-grpc-status-mapping.md` in the gRPC repository),
/// which tonic's client follows too: `None` for 200, whose status comes in the trailers.
///
/// | HTTP status | gRPC code |
/// |---|---|
/// | 400 | `INTERNAL` |
/// | 401 | `UNAUTHENTICATED` |
/// | 403 | `PERMISSION_DENIED` |
/// | 404 | `UNIMPLEMENTED` |
/// | 429, 502, 503, 504 | `UNAVAILABLE` |
/// | any other | `UNKNOWN` |
pub(crate) fn code_of_http_status(status: StatusCode) -> Option<Code> {
    Some(match status.as_u16() {
        200 => return None,
        400 => Code::Internal,
        401 => Code::Unauthenticated,
        403 => Code::PermissionDenied,
        404 => Code::Unimplemented,
        429 | 502 | 503 | 504 => Code::Unavailable,
        _ => Code::Unknown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_by_grpcs_mapping() {
        for code in 100..=999 {
            let status = StatusCode::from_u16(code).expect("100-999 are statuses");
            let expected = match code {
                200 => None,
                400 => Some(Code::Internal),
                401 => Some(Code::Unauthenticated),
                403 => Some(Code::PermissionDenied),
                404 => Some(Code::Unimplemented),
                429 | 502 | 503 | 504 => Some(Code::Unavailable),
                _ => Some(Code::Unknown),
            };
            assert_eq!(code_of_http_status(status), expected, "{code}");
        }
    }
}
