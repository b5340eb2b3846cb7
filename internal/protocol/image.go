package protocol

// Image is a picture a message carries: one the user attached to a prompt
// or one a tool returned (read_file of an image), for models that read
// images. Data is the encoded file in standard base64, as requests carry
// it; events that describe a message leave it out (see
// Message.WithoutImageData).
type Image struct {
	// MIME is the media type: image/png, image/jpeg, image/gif or
	// image/webp.
	MIME string `json:"mime"`
	// Data is the encoded image file, in standard base64.
	Data string `json:"data,omitempty"`
	// Name is the file it came from, if any.
	Name string `json:"name,omitempty"`
	// Width and Height are its size in pixels.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// WithoutImageData returns m with its images described but not carried:
// what events and previews hold, so that a stream of events stays small.
func (m *Message) WithoutImageData() *Message {
	if m == nil || len(m.Images) == 0 {
		return m
	}
	c := *m
	c.Images = make([]Image, len(m.Images))
	for i, img := range m.Images {
		img.Data = ""
		c.Images[i] = img
	}
	return &c
}
