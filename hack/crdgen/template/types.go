// Package template declares the Kubernetes types whose OpenAPI schema the App CRD embeds: controller-gen
// renders this package into a CRD, and hack/gen-pod-template-schema.ts extracts the two fields of Spec.
// +groupName=schema.ebb.dev
// +versionName=v1
package template

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Spec holds the fields of App.spec that come from the Kubernetes core/v1 API unchanged.
type Spec struct {
	// template is the pod every ordinal is created from.
	Template corev1.PodTemplateSpec `json:"template"`
	// volumeClaimTemplates are the claims each pod gets.
	// +optional
	VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates,omitempty"`
}

// Holder is a root type only so that controller-gen emits a CRD around Spec.
// +kubebuilder:object:root=true
type Holder struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              Spec `json:"spec"`
}
