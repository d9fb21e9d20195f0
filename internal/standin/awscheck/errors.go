package awscheck

import (
	"encoding/json"
	"net/http"
)

// writeRESTError answers in the REST-JSON services' error format (Bedrock,
// API Gateway): the code in X-Amzn-ErrorType, the message in the body under
// msgKey ("message" or "Message": services differ, and the SDKs read both).
func writeRESTError(w http.ResponseWriter, status int, code, msgKey, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", code)
	w.Header().Set("X-Amzn-Requestid", requestID())
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{msgKey: msg})
}

// writeJSON10Error answers in the awsJson1_0 format DynamoDB speaks: the
// code, with its namespace, in __type.
func writeJSON10Error(w http.ResponseWriter, status int, code, msgKey, msg string) {
	ns := "com.amazon.coral.service#"
	switch code {
	case "ValidationException":
		ns = "com.amazon.coral.validate#"
	case "ResourceNotFoundException":
		ns = "com.amazonaws.dynamodb.v20120810#"
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Errortype", code)
	w.Header().Set("X-Amzn-Requestid", requestID())
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"__type": ns + code, msgKey: msg})
}
